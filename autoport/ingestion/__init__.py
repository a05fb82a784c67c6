"""How vehicle data enters autoport: data sources (carmaker connectors), push ingestion."""
