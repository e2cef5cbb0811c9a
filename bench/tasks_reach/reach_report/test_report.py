from report import disk_line


def test_binary_units():
    assert disk_line('a', 2048) == 'a: 2.0 KiB'
    assert disk_line('b', 3 * 1024 * 1024) == 'b: 3.0 MiB'
