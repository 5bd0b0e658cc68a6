# SPDX-License-Identifier: Apache-2.0
"""Publishers, subscribers and wait sets are safe to share between threads: their calls take
turns, and a call that finds another thread's under way waits for it, within its own timeout."""

import threading

import pytest

import cerulion


def run_threads(count, body):
    """Runs body(i) in `count` threads; returns what each raised (failures are asserted after join)."""
    errors = []

    def guarded(i):
        try:
            body(i)
        except BaseException as error:  # noqa: B036 (recorded, asserted in the test's own thread)
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(i,), daemon=True) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not any(thread.is_alive() for thread in threads)
    return errors


def test_one_publisher_used_from_two_threads_publishes_every_message(topic):
    pub = cerulion.Publisher(topic, mode="free-run")
    per_thread = 5000
    seqs = [[], []]

    def publish(i):
        for _ in range(per_thread):
            seqs[i].append(pub.publish(b"x"))

    assert run_threads(2, publish) == []
    assert sorted(seqs[0] + seqs[1]) == list(range(2 * per_thread))


def test_loans_of_one_publisher_from_two_threads_are_all_published(topic):
    pub = cerulion.Publisher(topic, mode="free-run")
    published = [0, 0]

    def loan_and_publish(i):
        for _ in range(2000):
            with pub.loan(8) as buf:
                buf[:] = b"12345678"
            published[i] += 1

    assert run_threads(2, loan_and_publish) == []
    assert published == [2000, 2000]


def test_two_threads_receiving_on_one_subscriber_each_message_goes_to_one_of_them(topic):
    pub = cerulion.Publisher(topic)
    sub = cerulion.Subscriber(topic)
    total = 400
    got = [[], []]

    def receive(i):
        while len(got[0]) + len(got[1]) < total:
            try:
                with sub.receive(timeout=0.2) as sample:
                    got[i].append(sample.seq)
            except cerulion.Timeout:
                pass

    receivers = threading.Thread(target=lambda: errors.extend(run_threads(2, receive)), daemon=True)
    errors = []
    receivers.start()
    for n in range(total):
        pub.publish(str(n).encode(), timeout=30)
    receivers.join(120)
    assert not receivers.is_alive() and errors == []
    assert sorted(got[0] + got[1]) == list(range(total))


def test_every_thread_waiting_on_a_subscriber_is_told_when_it_is_closed(topic):
    sub = cerulion.Subscriber(topic)

    def body(i):
        if i < 2:
            sub.receive(timeout=60)  # one waits for a message, the other for its turn
        else:
            threading.Event().wait(0.3)
            sub.close()

    errors = run_threads(3, body)
    assert len(errors) == 2 and all(isinstance(error, cerulion.Closed) for error in errors), errors
