"""Store settings may travel with a clone; local settings never do.

A store is a repository other people clone, so its committed ``.memhtml/config.toml``
may say what the corpus is (embedder, model) but not which branch this clone writes,
where data goes, which secret to send or who the user is. Those come from flags,
``MEMHTML_*`` variables or the user's own config file. Every case here is real files in
a temporary directory and an explicit environment mapping: the process environment is
never read.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from returns.pipeline import is_successful

from memhtml.compose.settings import (
    CONFIG_FILE,
    LOCAL_KEYS,
    STORE_KEYS,
    LoadedSettings,
    Settings,
    SettingsError,
    load_settings,
    user_config_path,
)

LOCAL_VALUES = {
    "branch": "sleep/2026-12-06",
    "embed_url": "http://attacker.example/v1",
    "embed_key_env": "AWS_SECRET_ACCESS_KEY",
    "author_name": "Mallory",
    "author_email": "mallory@example.org",
    "llm": "openai",
    "llm_url": "http://attacker.example/v1",
    "llm_model": "attacker-model",
    "llm_key_env": "AWS_SECRET_ACCESS_KEY",
    "llm_timeout": "5",
    "llm_extra_body": "{}",
    "llm_token_field": "max_tokens",
    "llm_structured": "prompt",
    "transcripts_dir": "/home/victim/.ssh",
    "sync_remote": "attacker",
    "sync_seconds": "1",
}


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    (root / CONFIG_FILE).parent.mkdir(parents=True)
    return root


@pytest.fixture
def xdg(tmp_path: Path) -> Path:
    return tmp_path / "xdg"


def toml(pairs: dict[str, str]) -> str:
    return "".join(f'{key} = "{value}"\n' for key, value in pairs.items())


def write_store(store: Path, text: str) -> None:
    (store / CONFIG_FILE).write_text(text, encoding="utf-8")


def write_user(xdg: Path, text: str) -> Path:
    path = xdg / "memhtml" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def loaded(store: Path, env: dict[str, str], overrides: dict[str, str] | None = None
           ) -> LoadedSettings:
    result = load_settings(store, env, overrides)
    assert is_successful(result), result
    return result.unwrap()


def refused(store: Path, env: dict[str, str]) -> SettingsError:
    result = load_settings(store, env)
    assert not is_successful(result), result
    return result.failure()


def test_the_kinds_cover_every_setting_once() -> None:
    from dataclasses import fields

    assert sorted(STORE_KEYS) == ["embed_model", "embedder", "retention_grace_days",
                                  "sleep_archive_share",
                                  "vector_coverage_floor", "vector_weight"]
    assert sorted(LOCAL_KEYS) == ["author_email", "author_name", "branch", "embed_key_env",
                                  "embed_url",
                                  "llm", "llm_extra_body", "llm_key_env", "llm_model",
                                  "llm_structured", "llm_timeout", "llm_token_field",
                                  "llm_url",
                                  "sync_remote", "sync_seconds", "transcripts_dir"]
    assert not STORE_KEYS & LOCAL_KEYS
    assert sorted(STORE_KEYS | LOCAL_KEYS) == sorted(
        f.name for f in fields(Settings) if f.name != "store")


# --------------------------------------------------------------------------- precedence


def test_defaults_with_no_file_and_no_variable(store: Path) -> None:
    assert loaded(store, {}) == LoadedSettings(Settings(store=store), ())


def test_the_user_file_over_the_defaults(store: Path, xdg: Path) -> None:
    write_user(xdg, toml({"embedder": "hashing", **LOCAL_VALUES}))
    got = loaded(store, {"XDG_CONFIG_HOME": str(xdg)})
    assert got.warnings == ()
    assert got.settings == Settings(store=store, embedder="hashing", **LOCAL_VALUES)


def test_the_store_file_over_the_user_file_for_store_keys_only(store: Path, xdg: Path
                                                                ) -> None:
    write_user(xdg, toml({"branch": "mine", "embedder": "hashing", "embed_model": "u"}))
    write_store(store, toml({"branch": "theirs", "embed_model": "s"}))
    got = loaded(store, {"XDG_CONFIG_HOME": str(xdg)})
    assert (got.settings.branch, got.settings.embedder, got.settings.embed_model) == (
        "mine", "hashing", "s")
    [warning] = got.warnings
    assert f"ignored branch in {store / CONFIG_FILE}" in warning


def test_the_environment_over_the_store_file(store: Path, xdg: Path) -> None:
    write_user(xdg, toml({"branch": "mine", "embed_url": "http://user/v1"}))
    write_store(store, toml({"branch": "theirs", "embedder": "hashing"}))
    env = {"XDG_CONFIG_HOME": str(xdg), "MEMHTML_BRANCH": "env",
           "MEMHTML_EMBED_URL": "http://env/v1"}
    got = loaded(store, env).settings
    assert (got.branch, got.embedder, got.embed_url) == ("env", "hashing", "http://env/v1")


def test_flags_over_the_environment(store: Path, xdg: Path) -> None:
    write_store(store, toml({"branch": "theirs"}))
    env = {"XDG_CONFIG_HOME": str(xdg), "MEMHTML_BRANCH": "env",
           "MEMHTML_EMBED_URL": "http://env/v1"}
    got = loaded(store, env, {"branch": "flag", "embed_url": "http://flag/v1"}).settings
    assert (got.branch, got.embed_url) == ("flag", "http://flag/v1")


def test_an_unknown_flag_is_an_error(store: Path) -> None:
    assert "colour" in load_settings(store, {}, {"colour": "red"}).failure().reason


# --------------------------------------------------------------------------- local keys


@pytest.mark.parametrize("key", sorted(LOCAL_KEYS))
def test_a_local_key_in_the_store_file_is_ignored_and_named(store: Path, xdg: Path,
                                                            key: str) -> None:
    write_store(store, toml({"embedder": "openai", key: LOCAL_VALUES[key]}))
    got = loaded(store, {"XDG_CONFIG_HOME": str(xdg)})
    assert getattr(got.settings, key) == getattr(Settings(store=store), key)
    assert got.settings.embedder == "openai"  # the store key beside it still counts
    [warning] = got.warnings
    assert f"ignored {key} in {store / CONFIG_FILE}" in warning
    assert str(xdg / "memhtml" / "config.toml") in warning


def test_every_local_key_in_the_store_file_is_named(store: Path) -> None:
    write_store(store, toml(LOCAL_VALUES))
    got = loaded(store, {"HOME": str(store.parent / "home")})
    assert got.settings == Settings(store=store)
    [warning] = got.warnings
    assert all(key in warning for key in LOCAL_KEYS)
    assert "MEMHTML_*" in warning


def test_the_users_local_keys_stand_against_the_store_file(store: Path, xdg: Path) -> None:
    write_user(xdg, toml({"embed_url": "http://127.0.0.1:11434/v1",
                          "embed_key_env": "MY_KEY"}))
    write_store(store, toml({"embedder": "openai", "embed_model": "nomic",
                             "embed_url": "http://attacker.example/v1",
                             "embed_key_env": "AWS_SECRET_ACCESS_KEY"}))
    got = loaded(store, {"XDG_CONFIG_HOME": str(xdg)})
    assert got.settings.embed_url == "http://127.0.0.1:11434/v1"
    assert got.settings.embed_key_env == "MY_KEY"
    assert (got.settings.embedder, got.settings.embed_model) == ("openai", "nomic")
    assert len(got.warnings) == 1


# ------------------------------------------------------------------ where the user file is


def test_the_user_file_defaults_to_dot_config_under_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert user_config_path({"HOME": str(home)}) == home / ".config" / "memhtml" / "config.toml"
    assert user_config_path({"HOME": str(home), "XDG_CONFIG_HOME": ""}) == \
        home / ".config" / "memhtml" / "config.toml"


def test_a_relative_xdg_config_home_is_ignored(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert user_config_path({"HOME": str(home), "XDG_CONFIG_HOME": "rel"}) == \
        home / ".config" / "memhtml" / "config.toml"


def test_no_home_means_no_user_file() -> None:
    assert user_config_path({}) is None


def test_the_default_user_file_is_read(store: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_user(home / ".config", toml({"embed_url": "http://127.0.0.1:8080/v1"}))
    got = loaded(store, {"HOME": str(home), "XDG_CONFIG_HOME": ""})
    assert got.settings.embed_url == "http://127.0.0.1:8080/v1"


def test_xdg_config_home_wins_over_home(store: Path, tmp_path: Path, xdg: Path) -> None:
    home = tmp_path / "home"
    write_user(home / ".config", toml({"branch": "from-home"}))
    write_user(xdg, toml({"branch": "from-xdg"}))
    got = loaded(store, {"HOME": str(home), "XDG_CONFIG_HOME": str(xdg)})
    assert got.settings.branch == "from-xdg"


# ------------------------------------------------------------- unknown keys, wrong types


def test_an_unknown_key_in_the_user_file_is_an_error(store: Path, xdg: Path) -> None:
    path = write_user(xdg, toml({"brnach": "main"}))
    error = refused(store, {"XDG_CONFIG_HOME": str(xdg)})
    assert str(path) in error.reason
    assert "brnach" in error.reason


def test_an_unknown_key_in_the_store_file_is_a_warning(store: Path) -> None:
    write_store(store, toml({"embedder": "hashing", "vector_index": "hnsw"}))
    got = loaded(store, {})
    assert got.settings.embedder == "hashing"
    [warning] = got.warnings
    assert "unknown" in warning and "'vector_index'" in warning
    assert str(store / CONFIG_FILE) in warning


def test_a_store_key_name_cannot_reach_the_terminal_raw(store: Path) -> None:
    write_store(store, '"\\u001b[2Jgotcha" = 1\n')
    [warning] = loaded(store, {}).warnings
    assert "\x1b" not in warning
    assert "\\x1b" in warning


def test_a_wrong_type_in_the_user_file_is_an_error(store: Path, xdg: Path) -> None:
    path = write_user(xdg, "branch = 3\n")
    error = refused(store, {"XDG_CONFIG_HOME": str(xdg)})
    assert str(path) in error.reason
    assert "branch must be a string, not int" in error.reason


def test_a_wrong_type_in_the_store_file_is_ignored_with_a_warning(store: Path) -> None:
    write_store(store, 'embed_model = ["m"]\nembedder = "hashing"\n')
    got = loaded(store, {})
    assert (got.settings.embed_model, got.settings.embedder) == (None, "hashing")
    [warning] = got.warnings
    assert f"ignored embed_model in {store / CONFIG_FILE}" in warning
    assert "list" in warning


def test_a_committed_branch_of_any_type_is_ignored_as_a_local_key(store: Path) -> None:
    write_store(store, 'branch = ["main"]\nembedder = "hashing"\n')
    got = loaded(store, {})
    # Unset: the branch is this clone's own record, read when the store is opened.
    assert (got.settings.branch, got.settings.embedder) == ("", "hashing")
    [warning] = got.warnings
    assert f"ignored branch in {store / CONFIG_FILE}" in warning
    assert "choose the branch this clone writes" in warning


def test_a_wrong_typed_local_key_in_the_store_file_is_one_warning(store: Path) -> None:
    write_store(store, "embed_url = 1\n")
    [warning] = loaded(store, {}).warnings
    assert "ignored embed_url" in warning


# --------------------------------------------------------------------------- unreadable files


def test_an_unreadable_user_file_is_an_error_naming_it(store: Path, xdg: Path) -> None:
    path = write_user(xdg, "branch = \n")
    error = refused(store, {"XDG_CONFIG_HOME": str(xdg)})
    assert error.reason.startswith(f"cannot read {path}")


def test_a_user_file_that_is_a_directory_is_an_error(store: Path, xdg: Path) -> None:
    (xdg / "memhtml" / "config.toml").mkdir(parents=True)
    assert "not a regular file" in refused(store, {"XDG_CONFIG_HOME": str(xdg)}).reason


def test_an_unreadable_store_file_is_a_warning(store: Path, xdg: Path) -> None:
    write_user(xdg, toml({"branch": "mine"}))
    write_store(store, 'branch = "theirs"\nbroken = \n')
    got = loaded(store, {"XDG_CONFIG_HOME": str(xdg)})
    assert got.settings.branch == "mine"  # nothing of the file is used
    [warning] = got.warnings
    assert warning.startswith(f"cannot read {store / CONFIG_FILE}")
    assert "ignored" in warning


def test_a_store_file_that_is_not_utf8_is_a_warning(store: Path) -> None:
    (store / CONFIG_FILE).write_bytes(b'branch = "\xff"\n')
    got = loaded(store, {})
    assert got.settings == Settings(store=store)
    assert len(got.warnings) == 1


def test_a_store_config_that_is_a_directory_is_a_warning(store: Path) -> None:
    (store / CONFIG_FILE).mkdir()
    got = loaded(store, {})
    assert got.settings == Settings(store=store)
    [warning] = got.warnings
    assert "not a regular file" in warning


def test_a_store_with_no_config_directory_at_all(tmp_path: Path) -> None:
    assert loaded(tmp_path / "bare", {}).warnings == ()
