"""简体中文界面文案 (Simplified Chinese interface strings)."""

MESSAGES = {
    "unread": "未读",
    "mark_read": "标记为已读",
    "empty": "暂无新条目",
    "date_format": "{year}年{month}月{day}日",
}
