"""The ``llm*`` settings: the user's alone, checked into one model or one clear error.

They choose where every batched memory is sent and which secret goes with it, so a
store's committed config cannot set them (it is ignored, with the warning other local
keys get). Real files in temporary directories and explicit environment mappings: the
process environment is never read.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from returns.pipeline import is_successful
from returns.unsafe import unsafe_perform_io

from memhtml.adapters.clock import ManualClock
from memhtml.adapters.llm import DEFAULT_KEY_ENV, DEFAULT_TIMEOUT_SECONDS, HttpLanguageModel
from memhtml.compose.services import (
    LANGUAGE_MODELS,
    init_repository,
    open_services,
    pick_language_model,
)
from memhtml.compose.settings import (
    CONFIG_FILE,
    LOCAL_KEYS,
    STORE_KEYS,
    LoadedSettings,
    Settings,
    SettingsError,
    load_settings,
)
from memhtml.llm import DEFAULT_OPENAI_TOKEN_FIELD

START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)

LLM_KEYS = ("llm", "llm_url", "llm_model", "llm_key_env", "llm_timeout", "llm_extra_body",
            "llm_token_field", "llm_structured")
FULL = {"llm": "anthropic", "llm_url": "https://llm.example/v1", "llm_model": "a-model",
        "llm_key_env": "MY_LLM_KEY", "llm_timeout": "45.5",
        "llm_extra_body": '{"thinking": {"type": "disabled"}}',
        "llm_token_field": "max_tokens", "llm_structured": "prompt"}


def loaded(store: Path, env: dict[str, str]) -> LoadedSettings:
    result = load_settings(store, env)
    assert is_successful(result), result
    return result.unwrap()


def picked(settings: Settings) -> HttpLanguageModel | SettingsError | None:
    result = pick_language_model(settings, ManualClock(START), env={})
    if not is_successful(result):
        return result.failure()
    chosen = result.unwrap()
    assert chosen is None or isinstance(chosen, HttpLanguageModel)
    return chosen


def reason(settings: Settings) -> str:
    got = picked(settings)
    assert isinstance(got, SettingsError), got
    return got.reason


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    (root / CONFIG_FILE).parent.mkdir(parents=True)
    return root


def test_every_llm_key_is_local() -> None:
    assert set(LLM_KEYS) <= LOCAL_KEYS
    assert not set(LLM_KEYS) & STORE_KEYS
    assert LANGUAGE_MODELS == ("none", "openai", "anthropic")


def test_defaults_name_no_model(store: Path) -> None:
    settings = loaded(store, {}).settings
    assert (settings.llm, settings.llm_url, settings.llm_model) == ("none", None, None)
    assert settings.llm_key_env == DEFAULT_KEY_ENV
    assert float(settings.llm_timeout) == DEFAULT_TIMEOUT_SECONDS
    assert settings.llm_token_field == DEFAULT_OPENAI_TOKEN_FIELD
    assert picked(settings) is None


def test_local_keys_come_from_the_environment(store: Path) -> None:
    env = {f"MEMHTML_{key.upper()}": value for key, value in FULL.items()}
    settings = loaded(store, env).settings
    assert {key: getattr(settings, key) for key in LLM_KEYS} == FULL
    chosen = picked(settings)
    assert isinstance(chosen, HttpLanguageModel)
    assert (chosen.dialect, chosen.url, chosen.model_id, chosen.key_env, chosen.timeout,
            chosen.token_field) == ("anthropic", "https://llm.example/v1/messages", "a-model",
                                    "MY_LLM_KEY", 45.5, "max_tokens")


def test_local_keys_come_from_the_users_config(store: Path, tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    (xdg / "memhtml").mkdir(parents=True)
    (xdg / "memhtml" / "config.toml").write_text(
        "".join(f"{key} = '{value}'\n" for key, value in FULL.items()), encoding="utf-8")
    settings = loaded(store, {"XDG_CONFIG_HOME": str(xdg)}).settings
    assert {key: getattr(settings, key) for key in LLM_KEYS} == FULL


def test_a_committed_config_cannot_set_them(store: Path) -> None:
    (store / CONFIG_FILE).write_text(
        "".join(f"{key} = '{value}'\n" for key, value in FULL.items()), encoding="utf-8")
    got = loaded(store, {})
    settings = got.settings
    assert (settings.llm, settings.llm_url, settings.llm_model) == ("none", None, None)
    assert settings.llm_key_env == DEFAULT_KEY_ENV
    assert settings.llm_extra_body is None
    warned = [w for w in got.warnings if "llm" in w]
    assert len(warned) == 1
    assert all(key in warned[0] for key in LLM_KEYS)
    assert "come only from flags, MEMHTML_* variables" in warned[0]
    assert picked(settings) is None


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_a_missing_model_id_is_named(store: Path, dialect: str) -> None:
    settings = Settings(store=store, llm=dialect, llm_url="http://127.0.0.1:8080/v1")
    text = reason(settings)
    assert f"llm = {dialect} needs llm_model" in text
    assert "MEMHTML_LLM_MODEL" in text
    assert "llm_url" not in text


def test_a_missing_url_is_named(store: Path) -> None:
    text = reason(Settings(store=store, llm="openai", llm_model="m"))
    assert "needs llm_url" in text and "MEMHTML_LLM_URL" in text
    assert "llm_model" not in text


def test_both_missing_are_named_together(store: Path) -> None:
    text = reason(Settings(store=store, llm="anthropic"))
    assert "needs llm_url and llm_model" in text


@pytest.mark.parametrize(("changes", "words"), [
    ({"llm": "gpt"}, "unknown llm 'gpt'"),
    ({"llm_url": "file:///etc/passwd"}, "http or https"),
    ({"llm_timeout": "0"}, "llm_timeout must be a positive number"),
    ({"llm_timeout": "-3"}, "llm_timeout must be a positive number"),
    ({"llm_timeout": "soon"}, "llm_timeout must be a positive number"),
    ({"llm_timeout": "nan"}, "llm_timeout must be a positive number"),
    ({"llm_timeout": "inf"}, "llm_timeout must be a positive number"),
    ({"llm_extra_body": "[1, 2]"}, "must be a JSON object, not list"),
    ({"llm_extra_body": "{oops"}, "llm_extra_body is not valid JSON"),
    ({"llm_extra_body": '{"a": 1, "a": 2}'}, "appears twice"),
    ({"llm_extra_body": '{"a": NaN}'}, "not a JSON number"),
    ({"llm_token_field": "max_output_tokens"}, "llm_token_field must be"),
    ({"llm_structured": "grammar"}, "llm_structured must be auto, json_schema"),
])
def test_bad_values_are_settings_errors(store: Path, changes: dict[str, str],
                                        words: str) -> None:
    values = {"llm": "openai", "llm_url": "http://127.0.0.1:8080/v1", "llm_model": "m"}
    settings = Settings(store=store, **{**values, **changes})
    assert words in reason(settings)


def test_an_empty_key_variable_sends_no_credential(store: Path) -> None:
    chosen = picked(Settings(store=store, llm="openai", llm_url="http://127.0.0.1:8080/v1",
                             llm_model="m", llm_key_env=""))
    assert isinstance(chosen, HttpLanguageModel)
    assert chosen.key_env is None


def test_open_services_wires_the_model_or_keeps_the_error(store: Path) -> None:
    assert is_successful(init_repository(store))
    good = Settings(store=store, **FULL)
    services = unsafe_perform_io(open_services(good, clock=ManualClock(START),
                                               require_store=False).unwrap())
    assert isinstance(services.language_model, HttpLanguageModel)
    assert services.language_model.model_id == "a-model"
    assert services.language_model.structured == "prompt"
    assert services.language_model_error is None

    broken = Settings(store=store, llm="openai")
    services = unsafe_perform_io(open_services(broken, require_store=False).unwrap())
    assert services.language_model is None
    assert services.language_model_error is not None
    assert "llm_url and llm_model" in services.language_model_error.reason

    none = unsafe_perform_io(open_services(Settings(store=store), require_store=False).unwrap())
    assert none.language_model is None and none.language_model_error is None
