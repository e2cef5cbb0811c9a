from users import canonical_email


def test_canonical():
    assert canonical_email(' Ann+news@Example.com ') == 'ann@example.com'
    assert canonical_email('bob@x.org') == 'bob@x.org'
