"""The ``retention_grace_days`` store setting: days during which retention archives
nothing. A usable value is a finite number, 0 or more; anything else refuses the run
(it decides what may be archived, so it is never guessed), naming the setting."""

from __future__ import annotations

from pathlib import Path

import pytest
from returns.pipeline import is_successful
from returns.result import Success

from memhtml.compose.settings import STORE_KEYS, load_settings
from memhtml.compose.sleep import grace_days
from memhtml.domain.thresholds import RETENTION_GRACE_DAYS


@pytest.mark.parametrize(("text", "days"), [("30", 30.0), ("0", 0.0), ("7.5", 7.5),
                                            (" 90 ", 90.0), ("1e3", 1000.0)])
def test_a_usable_grace_period(text: str, days: float) -> None:
    assert grace_days(text) == Success(days)


@pytest.mark.parametrize("text", ["-1", "nan", "inf", "-inf", "a month", ""])
def test_an_unusable_grace_period_refuses_and_names_the_setting(text: str) -> None:
    result = grace_days(text)
    assert not is_successful(result)
    reason = result.failure().reason
    assert "retention_grace_days" in reason and repr(text) in reason


def test_the_default_is_the_domain_constant_and_a_store_may_set_it(tmp_path: Path) -> None:
    assert "retention_grace_days" in STORE_KEYS
    loaded = load_settings(tmp_path, {})
    assert is_successful(loaded)
    assert grace_days(loaded.unwrap().settings.retention_grace_days) == Success(
        RETENTION_GRACE_DAYS)
    (tmp_path / ".memhtml").mkdir()
    (tmp_path / ".memhtml" / "config.toml").write_text('retention_grace_days = "14"\n',
                                                       encoding="utf-8")
    committed = load_settings(tmp_path, {})
    assert is_successful(committed)
    assert committed.unwrap().settings.retention_grace_days == "14"
    overridden = load_settings(tmp_path, {"MEMHTML_RETENTION_GRACE_DAYS": "3"})
    assert overridden.unwrap().settings.retention_grace_days == "3"
