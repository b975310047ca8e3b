"""``[scopes]`` in the user's config file: ``~`` expanded, sorted by name, read only
unless a table says ``writable = true``; a store's committed file cannot name one."""

from __future__ import annotations

from pathlib import Path

import pytest

from memhtml.compose.settings import ScopeSetting, load_settings, user_scopes


def _user(tmp_path: Path, text: str) -> dict[str, str]:
    xdg = tmp_path / "xdg"
    (xdg / "memhtml").mkdir(parents=True)
    (xdg / "memhtml" / "config.toml").write_text(text, encoding="utf-8")
    return {"XDG_CONFIG_HOME": str(xdg), "HOME": str(tmp_path / "home")}


def test_scopes_expand_the_home_and_sort_by_name(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))  # what ``~`` expands to
    env = _user(tmp_path, '[scopes]\nzeta = "~/memory/zeta"\n'
                          '[scopes.team]\npath = "~/memory/team"\nwritable = true\n')
    assert user_scopes(env).unwrap() == (
        ScopeSetting("team", home / "memory" / "team", True),
        ScopeSetting("zeta", home / "memory" / "zeta", False))


def test_no_file_no_scopes_and_the_other_settings_still_load(tmp_path: Path) -> None:
    assert user_scopes({"XDG_CONFIG_HOME": str(tmp_path / "none")}).unwrap() == ()
    env = _user(tmp_path, 'author_name = "Ada"\n[scopes]\nteam = "/srv/team"\n')
    store = tmp_path / "store"
    store.mkdir()
    loaded = load_settings(store, env).unwrap()
    assert loaded.settings.author_name == "Ada" and loaded.warnings == ()


def test_a_store_file_naming_scopes_is_ignored_with_a_warning(tmp_path: Path) -> None:
    store = tmp_path / "store"
    (store / ".memhtml").mkdir(parents=True)
    (store / ".memhtml" / "config.toml").write_text('[scopes]\nloot = "/home"\n',
                                                     encoding="utf-8")
    loaded = load_settings(store, {"XDG_CONFIG_HOME": str(tmp_path / "none")}).unwrap()
    assert len(loaded.warnings) == 1 and loaded.warnings[0].startswith("ignored scopes in")
