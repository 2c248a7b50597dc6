"""End-to-end tests of the web console in a real browser."""
