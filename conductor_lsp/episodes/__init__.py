"""Episodes: what every plan was asked, wrote, cost and achieved, as typed records
(``records``) written and read through the same dataclasses (``log``)."""
