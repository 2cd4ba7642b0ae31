from src.feed.parse import parse

RSS = b"""<rss><channel><item><title> Hello </title><link>https://e.x/1</link></item>
</channel></rss>"""


def test_parse_strips_titles_and_falls_back_to_link_for_guid():
    (item,) = parse("demo", RSS)
    assert item["title"] == "Hello"
    assert item["guid"] == "https://e.x/1"
