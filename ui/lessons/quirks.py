"""The quirks gallery: the examples every tokenizer lecture uses, each with what to tell the class.

Each quirk is one or more short texts and two or three sentences written for a
class; the page shows the tokens every tokenizer makes of each text. The
"token tax" quirk is a table instead: the same short paragraph, written for this
project in each language below, with each tokenizer's tokens per character and
its cost against English.

Plain data and HTML (escaped); no Streamlit here.
"""

from __future__ import annotations

from dataclasses import dataclass

from ui.render import escape
from ui.views.compare import Row, chips, shown


@dataclass(frozen=True)
class Quirk:
    key: str
    title: str  # the button's label
    texts: tuple[str, ...]
    explanation: str  # two or three sentences for a class
    show_ids: bool = False  # draw each token's id (when the point is that the ids differ)


QUIRKS: tuple[Quirk, ...] = (
    Quirk(
        "strawberry",
        "Letters in strawberry",
        ("strawberry", " strawberry", "How many r's are in strawberry?"),
        "A language model never sees letters, only token ids: to it ' strawberry' is one to three opaque pieces, not ten letters. "
        "Counting the r's means knowing how each piece is spelled, which it only learns indirectly from text about spelling. "
        "Spelled out with spaces (s t r a w …) every letter becomes a token of its own, and the count is easy.",
    ),
    Quirk(
        "numbers",
        "9.11 vs 9.9, and digits",
        ("9.11 > 9.9", "1234567", "3.14159265358979", "In 2024 we paid $1,234,567.89"),
        "GPT-2 learned merges for whatever digit strings were common on the web, so numbers split into irregular chunks; GPT-4 and "
        "GPT-4o never let a pre-token hold more than three digits, so long numbers come in groups of three counted from the left. "
        "Either way '9.11' is 9, '.', 11 and '9.9' is 9, '.', 9: a model comparing them sees the tokens 11 and 9, and 11 looks bigger, "
        "as it is in version numbers and dates. Llama 2 and Mistral never join two digits (SentencePiece's split_digits): every digit "
        "is a token of its own, and 11 is 1, 1; Llama 3 cuts threes, as GPT-4 does.",
    ),
    Quirk(
        "the",
        "the / ␣the / The / ␣The",
        ("the", " the", "The", " The", "THE"),
        "Five spellings of one word are five different tokens with unrelated ids: the model must learn from data that they mean the "
        "same thing. The space belongs to the word after it (␣the), because the pre-tokenizer attaches a leading space to a word, "
        "so 'the' at the start of a line and 'the' inside a sentence are different tokens too. Llama 2 and Mistral write the space "
        "as ▁, a character of their vocabulary (GPT-2's files write Ġ for the space byte), and put a ▁ before the text: there "
        "'the' alone is ▁the, and ' the' is ▁ then ▁the.",
        show_ids=True,
    ),
    Quirk(
        "trailing",
        "Trailing whitespace",
        ("Here is a poem about the sea:", "Here is a poem about the sea: "),
        "In training text a space almost always travels with the word after it (␣the), so a prompt that ends in a space ends on a "
        "lone space token the model has rarely seen at the end of a text. It must continue from an unusual place and often does "
        "worse; this is why playgrounds warn about a trailing space.",
    ),
    Quirk(
        "indent",
        "Code indentation",
        ("def area(r):\n    if r < 0:\n        return 0\n    return 3.14159 * r * r\n",),
        "GPT-2 spends a token on every space of indentation but the last, which rides on ␣return (count the ␣ chips): its "
        "training text had little code. GPT-4's vocabulary has tokens for runs of spaces, so seven spaces are one token: the same "
        "program costs far fewer tokens and more of it fits in the model's context, one reason GPT-4 is better at code. Llama 2 "
        "writes every space as ▁ and has pieces for runs of them (▁▁▁).",
    ),
    Quirk(
        "tax",
        "Token tax: 16 languages",
        (),
        "The same short paragraph, written for this app in 16 languages and 10 scripts. English needs the fewest tokens because "
        "the tokenizers were trained mostly on English: text in other scripts falls apart into short pieces or bare bytes, so the "
        "same meaning costs several times more tokens (red: twice English's or more), more money per word and less room in the "
        "context. GPT-4o's bigger, more multilingual vocabulary narrows the gap; Llama 2's 32,000 pieces cover few scripts, and "
        "the rest falls back to bytes.",
    ),
    Quirk(
        "emoji",
        "An emoji with a zero-width joiner",
        ("👩‍💻", "👨‍👩‍👧", "I ❤️ 🏳️‍🌈"),
        "Some emoji are several characters glued together with an invisible zero-width joiner (U+200D): 👩‍💻 is 👩 + joiner + 💻, "
        "eleven bytes in UTF-8. A byte-level tokenizer that never learned them cuts them into byte pieces that are not characters "
        "on their own (the dashed chips), and the model has to put them back together. Llama 2 and Mistral have no piece for "
        "these emoji at all: byte fallback writes each one's UTF-8 bytes as <0xNN> tokens, four for 👩.",
    ),
)

BY_KEY = {q.key: q for q in QUIRKS}

# The token tax paragraph, written for this project (not copied from anywhere), in each language: (language, script, text).
PARAGRAPH: tuple[tuple[str, str, str], ...] = (
    (
        "English",
        "Latin",
        "The library opens at nine in the morning. Children read books by the window, and an old man waters the plants. "
        "In the evening the lights go out and the city grows quiet.",
    ),
    (
        "French",
        "Latin",
        "La bibliothèque ouvre à neuf heures du matin. Des enfants lisent des livres près de la fenêtre, et un vieil homme arrose "
        "les plantes. Le soir, les lumières s'éteignent et la ville devient calme.",
    ),
    (
        "Spanish",
        "Latin",
        "La biblioteca abre a las nueve de la mañana. Unos niños leen libros junto a la ventana y un anciano riega las plantas. "
        "Por la noche se apagan las luces y la ciudad se queda en silencio.",
    ),
    (
        "German",
        "Latin",
        "Die Bibliothek öffnet um neun Uhr morgens. Kinder lesen Bücher am Fenster, und ein alter Mann gießt die Pflanzen. "
        "Am Abend gehen die Lichter aus, und die Stadt wird still.",
    ),
    (
        "Turkish",
        "Latin",
        "Kütüphane sabah dokuzda açılır. Çocuklar pencerenin yanında kitap okur, yaşlı bir adam da bitkileri sular. "
        "Akşam olunca ışıklar söner ve şehir sessizleşir.",
    ),
    (
        "Vietnamese",
        "Latin",
        "Thư viện mở cửa lúc chín giờ sáng. Trẻ em đọc sách bên cửa sổ, và một ông cụ tưới cây. "
        "Buổi tối, đèn tắt và thành phố trở nên yên tĩnh.",
    ),
    (
        "Swahili",
        "Latin",
        "Maktaba hufunguliwa saa tatu asubuhi. Watoto husoma vitabu karibu na dirisha, na mzee mmoja humwagilia mimea maji. "
        "Jioni taa huzimwa na mji hutulia.",
    ),
    (
        "Russian",
        "Cyrillic",
        "Библиотека открывается в девять утра. Дети читают книги у окна, а старик поливает растения. Вечером гаснет свет, и город затихает.",
    ),
    (
        "Greek",
        "Greek",
        "Η βιβλιοθήκη ανοίγει στις εννιά το πρωί. Τα παιδιά διαβάζουν βιβλία δίπλα στο παράθυρο και ένας ηλικιωμένος ποτίζει τα φυτά. "
        "Το βράδυ τα φώτα σβήνουν και η πόλη ησυχάζει.",
    ),
    (
        "Hebrew",
        "Hebrew",
        "הספרייה נפתחת בתשע בבוקר. ילדים קוראים ספרים ליד החלון, ואיש זקן משקה את הצמחים. בערב האורות כבים והעיר נרגעת.",
    ),
    (
        "Arabic",
        "Arabic",
        "تفتح المكتبة في التاسعة صباحًا. يقرأ الأطفال الكتب بجانب النافذة، ويسقي رجل عجوز النباتات. في المساء تنطفئ الأضواء وتهدأ المدينة.",
    ),
    (
        "Hindi",
        "Devanagari",
        "पुस्तकालय सुबह नौ बजे खुलता है। बच्चे खिड़की के पास किताबें पढ़ते हैं, और एक बूढ़ा आदमी पौधों को पानी देता है। "
        "शाम को बत्तियाँ बुझ जाती हैं और शहर शांत हो जाता है।",
    ),
    (
        "Thai",
        "Thai",
        "ห้องสมุดเปิดตอนเก้าโมงเช้า เด็ก ๆ อ่านหนังสืออยู่ข้างหน้าต่าง และชายชราคนหนึ่งรดน้ำต้นไม้ พอตกเย็นไฟก็ดับ และเมืองก็เงียบลง",
    ),
    ("Chinese", "Han", "图书馆早上九点开门。孩子们在窗边看书，一位老人在给植物浇水。到了晚上，灯熄了，城市安静下来。"),
    (
        "Japanese",
        "Kana and kanji",
        "図書館は朝九時に開きます。子どもたちは窓のそばで本を読み、おじいさんが植物に水をやっています。夜になると明かりが消え、町は静かになります。",
    ),
    (
        "Korean",
        "Hangul",
        "도서관은 아침 아홉 시에 문을 엽니다. 아이들은 창가에서 책을 읽고, 할아버지 한 분이 식물에 물을 줍니다. 저녁이 되면 불이 꺼지고 도시는 조용해집니다.",
    ),
)
LANGUAGES = {language: text for language, _, text in PARAGRAPH}


# ---------------------------------------------------------------------------
# drawing


def text_block(text: str, rows: list[Row], show_ids: bool = False) -> str:
    """One text and every tokenizer's tokens of it: a line per tokenizer (its name, its count, its chips)."""
    lines = []
    for r in rows:
        ids = f"<span class='ids'>{'ids' if len(r.ids) > 1 else 'id'} {', '.join(map(str, r.ids))}</span>" if show_ids else ""
        count = f"{len(r.tokens):,} token{'s' if len(r.tokens) != 1 else ''}"
        lines.append(f"<div class='qname'>{escape(r.label)}</div><div class='qcount'>{count}</div><div>{chips(r, [])}{ids}</div>")
    text_shown = escape(shown(text.encode("utf-8"))).replace("↵", "↵\n")  # code keeps its lines (.qtext is pre-wrap)
    return f"<div class='quirk'><div class='qtext'>{text_shown}</div><div class='qgrid'>{''.join(lines)}</div></div>"


def tax_table(results: dict[str, list[Row]]) -> str:
    """Languages down, tokenizers across: tokens per character, and the tokens against English's."""
    labels = [r.label for r in next(iter(results.values()))]
    english = {r.label: len(r.tokens) for r in results["English"]}
    head = (
        "<tr><th>language</th><th class='n'>characters</th>" + "".join(f"<th class='n'>{escape(label)}</th>" for label in labels) + "</tr>"
    )
    body = []
    for (language, script, text), rows in zip(PARAGRAPH, results.values()):
        cells = []
        for r in rows:
            ratio = len(r.tokens) / english[r.label] if english[r.label] else 0
            tax = " class='n tax'" if ratio >= 2 else " class='n'"
            cells.append(
                f"<td{tax}><b>{len(r.tokens) / len(text):.2f}</b><br><span class='sub'>{len(r.tokens):,}&nbsp;tok · {ratio:.1f}×</span></td>"
            )
        body.append(
            f"<tr><td>{escape(language)}<br><span class='sub'>{escape(script)}</span></td><td class='n'>{len(text):,}</td>{''.join(cells)}</tr>"
        )
    return f"<table class='compare tax'>{head}{''.join(body)}</table>"
