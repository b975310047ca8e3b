"""The sleep run's model, as the composition root hands it over: a configured model
reaches every phase, and a model setting that cannot be used refuses the run rather
than quietly running without a model."""

from __future__ import annotations

from pathlib import Path

import pytest
from returns.pipeline import is_successful

from memhtml.compose import Settings, open_services, value_of
from memhtml.compose.services import init_repository
from memhtml.compose.sleep import head_gate, sleep_deps
from memhtml.store import init_store


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("MEMHTML_LLM", "MEMHTML_LLM_URL", "MEMHTML_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    root = tmp_path / "store"
    value_of(init_repository(root))
    services = value_of(open_services(Settings(store=root), require_store=False))
    value_of(init_store(services.store().deps))
    return root


def test_a_configured_model_reaches_the_run(store: Path) -> None:
    services = value_of(open_services(Settings(
        store=store, llm="openai", llm_url="http://127.0.0.1:9/v1", llm_model="m")))
    deps = sleep_deps(services, head_gate).unwrap()
    assert deps.model is not None and deps.model.model_id == "m"


def test_no_model_runs_without_one(store: Path) -> None:
    deps = sleep_deps(value_of(open_services(Settings(store=store))), head_gate).unwrap()
    assert deps.model is None


def test_a_model_setting_that_cannot_be_used_refuses_the_run(store: Path) -> None:
    services = value_of(open_services(Settings(store=store, llm="openai")))
    assert services.language_model is None and services.language_model_error is not None
    refused = sleep_deps(services, head_gate)
    assert not is_successful(refused)
    assert "llm_url" in refused.failure().reason
