"""Fleet clearance: an application asks for vehicles to be cleared, the carmaker decides,
the application reads approved vehicles with its client_credentials token."""
