from case import to_camel, to_snake


def test_to_camel():
    assert to_camel("user_name") == "userName"
    assert to_camel("id") == "id"


def test_to_snake():
    assert to_snake("userName") == "user_name"
