"""Token-level methods over frozen models: GLOT token-graph pooling (``glot``, ``pooling``, ``stress``)."""
