"""Stream messages written straight to the store, for the console's streaming pages and
its live view tests."""

from __future__ import annotations

import uuid

from autoport.streaming import repository as streaming_repository

from .conftest import Console


async def message(console: Console, app_id: str, seq: int, text: str) -> None:
    async with console.database.transaction() as conn:
        await streaming_repository.create_messages(
            conn,
            [
                {
                    "environment": "sandbox",
                    "application_id": app_id,
                    "seq": seq,
                    "message_id": str(uuid.uuid4()),
                    "vin": "SBX00000000000001",
                    "message": text,
                    "ingested_at": console.clock.now_us(),
                    "created_at": console.clock.now_us(),
                }
            ],
        )
