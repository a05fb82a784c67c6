"""The ownership proof: a vehicle code on the car's display or the carmaker's login, one
way for the consent pages and the owner portal (service.py, flows.py)."""
