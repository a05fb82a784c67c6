"""How vehicle data enters autoport: push ingestion (data providers), validated, stored and
streamed; on-demand fetches come through the carmaker connectors (autoport.brands)."""
