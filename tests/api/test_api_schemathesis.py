"""Property-based tests of the HTTP API against its own OpenAPI schema (schemathesis 4).

Schemathesis generates valid and invalid requests from the schema, sends them to the ASGI app in
process, and checks that nothing answers 5xx and that every response matches the documented
status codes and bodies. Examples are bounded to keep the suite fast.
"""

from __future__ import annotations

import hypothesis
import pytest
import schemathesis
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)


from pictorank.api.app import create_app
from pictorank.api.settings import Settings

# The schema comes from an app that loads nothing (the schema does not depend on the model; and
# from_asgi would start that app's lifespan, i.e. load a model); the requests go to the session's
# loaded service. (schemathesis.pytest.from_fixture would be the natural way, but schemathesis 4.32
# uses a pytest attribute that pytest 9 removed.)
schema = schemathesis.openapi.from_dict(create_app(Settings()).openapi())

# `positive_data_acceptance` is left out on purpose: the schema cannot say that hint ids must exist
# in the served vocabulary, or that exactly one of `hints`/`hint_texts` is given, so some
# schema-valid requests are rightly refused with a 422 naming the field.
@pytest.fixture(scope="module")
def fuzzed_app(real_service, clue_giver):
    """An app of its own (own metrics registry) over the session's service and clue-giver."""
    return create_app(Settings(), service=real_service, clues=clue_giver)


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    negative_data_rejection,
]


@schema.parametrize()
@hypothesis.settings(max_examples=40, deadline=None, suppress_health_check=list(hypothesis.HealthCheck))
def test_api_conforms_to_its_schema(case, fuzzed_app) -> None:
    case.call_and_validate(checks=CHECKS, app=fuzzed_app)


def test_schemathesis_reached_the_ranker(fuzzed_app) -> None:
    """Runs after the generated cases: they must have produced both rankings and refusals,
    or the property test above proved nothing about the ranking path."""
    counts = {
        (s.labels["route"], s.labels["status"]): s.value
        for metric in fuzzed_app.state.metrics.registry.collect()
        for s in metric.samples
        if s.name == "pictorank_http_requests_total"
    }
    for route in ("/rank", "/rank/batch"):
        assert counts.get((route, "200"), 0) > 0, sorted(counts.items())
        assert counts.get((route, "422"), 0) > 0, counts
