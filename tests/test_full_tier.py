"""Full tier (``make test-full``): re-measure the embedded models and rewrite assets/models.json, the recorded
metadata the models page shows (cached loads, sanity results)."""

from __future__ import annotations

import pytest

from backend import models


@pytest.mark.full
@pytest.mark.parametrize("model_id", list(models.MODELS))
def test_record_embedded_model(model_id):
    result = models.check(model_id)
    assert result["sanity_ok"] is True, result
    models.record(model_id, result)
