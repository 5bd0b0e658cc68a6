# SPDX-License-Identifier: Apache-2.0
"""A released sample, a published loan and a closed endpoint refuse use with cerulion.Closed."""

import numpy as np
import pytest

import cerulion


def test_a_released_sample_refuses_views_and_data(topic):
    pub = cerulion.Publisher(topic)
    sub = cerulion.Subscriber(topic)
    pub.publish_json({"n": 1})
    with sub.receive(timeout=30) as sample:
        assert sample.json() == {"n": 1}
    assert sample.released
    for use in (memoryview, lambda s: np.frombuffer(s, np.uint8), lambda s: s.data, lambda s: s.json(),
                lambda s: s.as_array(np.uint8)):
        with pytest.raises(cerulion.Closed) as raised:
            use(sample)
        assert "released" in str(raised.value)
        assert raised.value.subject.name == topic
    assert sample.seq == 0  # what it was stays readable


def test_a_loan_refuses_views_once_published_or_discarded(topic):
    pub = cerulion.Publisher(topic)
    published = pub.loan(8)
    published.publish()
    discarded = pub.loan(8)
    discarded.discard()
    for loan in (published, discarded):
        with pytest.raises(cerulion.Closed):
            memoryview(loan)
        with pytest.raises(cerulion.Closed):
            loan.publish()


def test_the_memoryview_of_a_with_block_ends_with_it(topic):
    pub = cerulion.Publisher(topic)
    with pub.loan(8) as buf:
        buf[:] = b"12345678"
    with pytest.raises(ValueError):
        buf[0] = 0


def test_closed_endpoints_raise_closed(topic):
    pub = cerulion.Publisher(topic)
    sub = cerulion.Subscriber(topic)
    pub.close()
    sub.close()
    pub.close()  # idempotent
    with pytest.raises(cerulion.Closed):
        pub.publish(b"x")
    with pytest.raises(cerulion.Closed):
        pub.loan(1)
    with pytest.raises(cerulion.Closed):
        sub.receive(timeout=0)
    assert isinstance(cerulion.Closed("x"), cerulion.InvalidArgument)


def test_a_loan_of_a_closed_publisher_is_discarded_not_published(topic):
    sub = cerulion.Subscriber(topic)
    with cerulion.Publisher(topic) as pub:
        loan = pub.loan(4)
    with pytest.raises(cerulion.Closed, match="the publisher of '.*' was closed; the loan was discarded"):
        loan.publish()
    assert sub.try_receive() is None
