"""A vehicle's identity and who may read it: VIN syntax (`vin`), and the one read-access
rule the pull endpoint, history and streams share, with the brand rules per environment
(`access`). Carmaker names and manufacturer codes are facts of the catalog
(`autoport.catalog.brands`)."""
