"""Training scripts of every shipped weight file: ``python -m backend.train <id>``. None of them runs in the tests."""
