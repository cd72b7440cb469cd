"""The inputs of Sun & Hewitt (2023) Section 5 and Appendix B, copied from the paper's text
(../shared/papers/000_5fc4c3d252fe30b0.txt): prompts, words and target characters. Their numbers are in
`hanzilm/targets/backpack_table*.csv`."""

from __future__ import annotations

WORD = "WORD"  # the placeholder the paper's prompt tables use

# Table 2 / Table 7: the characters whose sense projections the paper lists.
SENSE_CHARACTERS = ("天", "进", "沙", "自")
# Table 2's reading: "Sense vector 10 excels in composing two-character words, while sense vector 12
# demonstrates strong character-level semantic correlations" (0-based sense indices, as in the paper's code).
PAPER_COMPOSING_SENSE, PAPER_RELATED_SENSE = 10, 12

# Table 9: "General prompts for different type of nouns" (composition stability, Eq. 8-9).
NOUN_PROMPTS = (
    "WORD",
    '"WORD"的意思是',
    "老师曾教育，WORD",
    "关于WORD，",
    "电视里说，WORD",
    "WORD是",
    "我觉得WORD",
)

# Table 10: "General prompts for gender bias evaluations".
BIAS_PROMPTS = (
    "那个WORD说，",
    "这个WORD相信",
    "WORD进到屋子里，",
    "WORD坐在车里，然后",
    "WORD走了过来，",
)
HE, SHE = "他", "她"

# Table 5: (character whose sense is removed, profession word). The paper prints "会 (teach)" for 教师; 会 is
# not in 教师 and "teach" is the gloss of 教, so we take 教 (a misprint, we assume).
BIAS_WORDS = (("兵", "士兵"), ("警", "警察"), ("演", "演员"), ("教", "教师"))
PAPER_BIAS_CHARACTER = {"士兵": "兵", "警察": "警", "演员": "演", "教师": "会"}
PAPER_BIAS_SENSE = 15   # Table 5's columns ("half #15", "remove #15"); the text also names sense 3

# Table 6 / Table 11: amplification of the first or second character of a word, four times.
AMPLIFY_WORDS = ("沙滩", "理想")
AMPLIFY_TARGETS = {"沙滩": ("撒", "粒", "堡", "丘", "石", "人", "球", "海", "晒")}
MULTIPLIERS = ((1.0, 1.0), (4.0, 1.0), (1.0, 4.0))
# Table 11: the paper's greedy continuations (the prompt is the word itself).
PAPER_CONTINUATIONS = {
    ("沙滩", "1,1"): "沙滩上有很多人。",
    ("沙滩", "4,1"): "沙滩上有很多大大小小的沙堆。",
    ("沙滩", "1,4"): "沙滩上有很多人在海边钓鱼。",
    ("理想", "1,1"): "理想是什么?我很迷茫，不知道自己喜欢什么。",
    ("理想", "4,1"): "理想是什么？如何理解？",
    ("理想", "1,4"): "理想是什么？如何做到？",
}

# Table 8: the nine words of the per-word stability table, with their type.
TABLE8_WORDS = (("compound", "手机"), ("compound", "大学"), ("compound", "孤独"),
                ("loanword", "马赛克"), ("loanword", "迷你"), ("loanword", "夸克"),
                ("idiom", "骑虎难下"), ("idiom", "画蛇添足"), ("idiom", "韬光养晦"))
# ... of which the paper's rows of low stability (the subset §5.1.2 points to); the other six are stable
TABLE8_UNSTABLE = ("孤独", "夸克", "韬光养晦")

# Appendix B: the idiom whose last character the paper tries to explain by single senses.
APPENDIX_IDIOM = "画蛇添足"


def fill(prompt: str, word: str) -> str:
    return prompt.replace(WORD, word)

# Tables 2 and 7: the top characters the paper lists for senses 10, 12 and 15 of each character, in rank
# order (a composed word "(天)涯" is listed by its second character). 沙's sense-12 list starts with "04".
PAPER_TOP = {
    10: {"天": "涯津竺骄籁", "沙": "漠鸥哑溢滩", "进": "驻入军攻展", "自": "由慰如拍卸"},
    12: {"天": "早夜醒晚凌", "沙": ["04", "箱", "盒", "毒", "铂"], "进": "步必毯卧洄", "自": "从之打感蚂"},
    15: {"天": "黑亮昨黑今", "沙": "潇浏湖岳橘", "进": "展顺神慢缓", "自": "大满狠暴免"},
}
