"""Usage figures of applications: requests per day, rate-limit hits, webhook success."""
