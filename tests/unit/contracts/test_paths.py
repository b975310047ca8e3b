import pytest
from returns.result import Failure, Success

from memhtml.contracts import check_tree_path, to_document_path, to_tree_path


def test_path_forms_convert_both_ways() -> None:
    assert to_tree_path("/areas/x.html") == "areas/x.html"
    assert to_document_path("areas/x.html") == "/areas/x.html"
    assert to_tree_path(to_document_path("a/b.html")) == "a/b.html"


@pytest.mark.parametrize(
    "path",
    ["", "/etc/passwd", "a/../b.html", "../x.html", "a\\b.html", ".git/config", "a//b.html",
     "a/./b.html", "x/.git/y", "a/\x00b.html"],
)
def test_paths_that_leave_the_store_are_refused(path: str) -> None:
    result = check_tree_path(path)
    assert isinstance(result, Failure)
    assert result.failure().path == path
    assert result.failure().reason


def test_plain_relative_path_is_accepted() -> None:
    assert check_tree_path("areas/deploy/x.html") == Success("areas/deploy/x.html")
