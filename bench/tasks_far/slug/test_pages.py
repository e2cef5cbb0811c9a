from pages import url_for


def test_plain_titles():
    assert url_for("News", "Hello World") == "/news/hello-world/"


def test_accented_titles():
    assert url_for("Café", "Crème brûlée") == "/cafe/creme-brulee/"
