"""The store itself: places, articles, the index, writes, options."""
