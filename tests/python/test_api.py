# SPDX-License-Identifier: Apache-2.0
"""The API as C++ has it: names, defaults, metadata, iteration, documentation."""

import os
import pathlib
import threading

import cerulion


def test_defaults_are_those_of_the_cpp_api(topic):
    pub = cerulion.Publisher(topic)
    sub = cerulion.Subscriber(topic)
    assert pub.mode == cerulion.Mode.Lockstep and pub.depth == 16 and pub.max_payload == 1 << 30
    assert sub.role == cerulion.Role.Subscriber and pub.subscriber_count == 1
    assert pub.domain == sub.domain == os.environ["CERULION_DOMAIN"]
    assert pub.type.raw and pub.type.schema is None


def test_a_topic_type_is_declared_with_an_encoding_and_a_schema(topic):
    schema = cerulion.Schema("Point", "jsonschema", '{"type": "object"}')
    pub = cerulion.Publisher(topic, encoding="json", schema=schema)
    sub = cerulion.Subscriber(topic)
    assert sub.type.encoding == "json" and sub.type.schema == schema
    assert sub.type.schema.data == b'{"type": "object"}'
    del pub


def test_enums_and_their_names_are_both_accepted(topic):
    pub = cerulion.Publisher(topic, mode=cerulion.Mode.FreeRun, wait=cerulion.WaitStrategy.Block)
    tap = cerulion.Subscriber(topic, tap=True, wait="block", start=cerulion.StartAt.First)
    assert pub.mode == cerulion.Mode.FreeRun and pub.mode.name == "FreeRun"
    assert tap.role == cerulion.Role.Tap and pub.subscriber_count == 0


def test_a_sample_carries_its_metadata(topic):
    pub = cerulion.Publisher(topic, mode="free-run", depth=2)
    sub = cerulion.Subscriber(topic)
    for n in range(5):
        pub.publish(bytes([n]))
    sample = sub.receive(timeout=30)
    assert sample.seq == 3 and sample.lost_before == 3 and sample.data == bytes([3])
    assert sample.publish_time_ns > 0 and sample.publish_realtime_ns > 0
    assert sample.publisher_pid == os.getpid() and len(sample) == 1 and sample.topic == topic


def test_iterating_a_subscriber_yields_messages_until_closed(topic):
    pub = cerulion.Publisher(topic)
    sub = cerulion.Subscriber(topic)
    for n in range(3):
        pub.publish_json(n)
    seen = []
    for sample in sub:
        seen.append(sample.json())
        if len(seen) == 3:
            threading.Timer(0.2, sub.close).start()
    assert seen == [0, 1, 2]


def test_the_environment_domain_or_the_argument_names_the_domain(topic):
    elsewhere = cerulion.Subscriber(topic, domain=os.environ["CERULION_DOMAIN"] + "-other")
    pub = cerulion.Publisher(topic)
    pub.publish(b"here")
    assert elsewhere.try_receive() is None and elsewhere.domain.endswith("-other")


def test_everything_public_is_documented_and_typed():
    for name in cerulion.__all__:
        assert getattr(cerulion, name).__doc__, name
    for method in ("receive", "try_receive", "close"):
        assert getattr(cerulion.Subscriber, method).__doc__
    for method in ("loan", "publish", "publish_json", "wait_for_subscribers"):
        assert getattr(cerulion.Publisher, method).__doc__
    for method in ("add", "remove", "add_timer", "wait", "receive", "close"):
        assert getattr(cerulion.WaitSet, method).__doc__
    for method in ("add_channel", "write", "close"):
        assert getattr(cerulion.RecordingWriter, method).__doc__
    assert cerulion.Recording.messages.__doc__
    package = pathlib.Path(cerulion.__file__).parent
    stub = (package / "__init__.pyi").read_text()
    for name in cerulion.__all__:
        assert f"class {name}" in stub or f"def {name}(" in stub, name
    assert (package / "py.typed").exists()
