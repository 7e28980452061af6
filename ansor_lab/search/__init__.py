"""The auto-scheduler: sketches, sampling, evolution, features, cost models, tuning."""
