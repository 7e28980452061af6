"""Measurement: isolated builders and runners, and the records log."""
