"""Vehicle commands: `POST /v1/vehicle-commands/autoapi-13/{vin}` (lock the doors, start
charging ...), executed once through the brand's connector by a worker (tasks.py)."""
