"""The API documentation: Swagger UI and the OpenAPI description, per environment."""
