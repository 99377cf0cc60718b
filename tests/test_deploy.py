"""deploy/'s manifests are valid for the tools that read them, checked offline by schema.

Why: nothing here runs a cluster or a compose engine, so a typo in a manifest would show only on
deployment. kubernetes-validate holds the Kubernetes API's JSON schemas; compose-spec parses a
compose file as Docker Compose's specification defines it.
"""

from __future__ import annotations

from pathlib import Path

import kubernetes_validate
import pytest
import yaml
from compose_spec import PyCompose

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
KUBERNETES_VERSION = "1.33"  # a version a current cluster runs; the schemas ship in the package


def resources() -> list[dict]:
    return [doc for doc in yaml.safe_load_all((DEPLOY / "kubernetes.yaml").read_text()) if doc]


def test_the_kubernetes_manifests_validate_strictly():
    kinds = []
    for resource in resources():
        kubernetes_validate.validate(resource, KUBERNETES_VERSION, strict=True)
        kinds.append(resource["kind"])
    assert kinds == ["Deployment", "Service"]


def test_the_deployment_probes_the_service_and_runs_unprivileged():
    deployment = resources()[0]
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["readinessProbe"]["httpGet"]["path"] == "/ready"
    assert container["livenessProbe"]["httpGet"]["path"] == "/health"
    assert pod["securityContext"]["runAsNonRoot"] and container["resources"]["limits"]["memory"]
    service = resources()[1]
    assert service["spec"]["selector"] == deployment["spec"]["template"]["metadata"]["labels"]


def test_a_misspelt_kubernetes_field_is_caught():
    deployment = resources()[0]
    deployment["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, KUBERNETES_VERSION, strict=True)


def test_the_compose_file_parses_with_two_replicas_probing_ready():
    compose = PyCompose.from_yaml((DEPLOY / "compose.yaml").read_text())
    compose.validate()
    service = compose.to_dict()["services"]["pictorank"]
    assert service["deploy"]["replicas"] == 2
    assert any("/ready" in part for part in service["healthcheck"]["test"])


def test_a_misspelt_compose_field_is_caught():
    text = (DEPLOY / "compose.yaml").read_text().replace("replicas: 2", "replica: 2")
    with pytest.raises(Exception):
        PyCompose.from_yaml(text).validate()
