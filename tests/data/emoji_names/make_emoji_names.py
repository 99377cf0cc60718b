"""Generator of tests/data/emoji_names: hand-written emoji clues whose answers are names and phrases.

Each answer has two clues of emoji short names (CLDR-style). The first clue of an answer becomes
a subtask-1 row (4 options) and a subtask-3 row (30 options), the second a subtask-2 row
(10 options); options are the other answers, drawn with a fixed seed. Run it in this folder.
"""
import csv
import json
import random

PUZZLES = [
    ("Harry Potter", ["man mage", "high voltage", "glasses"], ["owl", "magic wand", "castle"]),
    ("Titanic", ["passenger ship", "ice", "broken heart"], ["ship", "couple with heart", "water wave"]),
    ("Star Wars", ["star", "crossed swords", "rocket"], ["glowing star", "robot", "dagger"]),
    ("New York", ["Statue of Liberty", "red apple", "taxi"], ["cityscape", "red apple", "yellow taxi"]),
    ("Paris", ["baguette bread", "croissant", "flag: France"], ["flag: France", "couple with heart", "wine glass"]),
    ("Santa Claus", ["Christmas tree", "wrapped gift", "sled"], ["man", "deer", "wrapped gift"]),
    ("happy birthday", ["birthday cake", "grinning face", "party popper"], ["balloon", "confetti ball", "candle"]),
    ("Spider-Man", ["spider", "man", "spider web"], ["spider web", "man superhero"]),
    ("Batman", ["bat", "man", "night with stars"], ["bat", "man superhero"]),
    ("Snow White", ["snowflake", "white circle", "red apple", "princess"], ["princess", "red apple", "sleeping face"]),
    ("The Lion King", ["lion", "crown"], ["lion", "prince", "sunrise"]),
    ("Finding Nemo", ["tropical fish", "magnifying glass tilted left"], ["tropical fish", "water wave", "magnifying glass tilted left"]),
    ("Jurassic Park", ["sauropod", "T-Rex", "national park"], ["T-Rex", "national park"]),
    ("Toy Story", ["teddy bear", "cowboy hat face", "books"], ["cowboy hat face", "rocket", "teddy bear"]),
    ("Beauty and the Beast", ["princess", "rose", "ogre"], ["woman", "rose", "bison"]),
    ("Big Ben", ["mantelpiece clock", "flag: United Kingdom", "classical building"], ["bell", "mantelpiece clock", "flag: United Kingdom"]),
    ("Mickey Mouse", ["mouse face", "clapper board"], ["mouse", "man", "ear"]),
    ("Albert Einstein", ["man scientist", "light bulb", "brain"], ["man scientist", "woman white hair", "light bulb"]),
    ("William Shakespeare", ["skull", "scroll", "performing arts"], ["performing arts", "feather", "scroll"]),
    ("Cinderella", ["high-heeled shoe", "jack-o-lantern", "princess"], ["princess", "mantelpiece clock", "high-heeled shoe"]),
    ("Pac-Man", ["video game", "ghost", "cherries"], ["ghost", "yellow circle", "video game"]),
    ("Mona Lisa", ["framed picture", "slightly smiling face", "woman"], ["artist palette", "woman", "slightly smiling face"]),
    ("Romeo and Juliet", ["couple with heart", "skull", "rose"], ["man", "woman", "test tube", "broken heart"]),
    ("Wall Street", ["chart increasing", "money bag", "office building"], ["motorway", "dollar banknote", "chart decreasing"]),
    ("Hollywood", ["clapper board", "star", "movie camera"], ["movie camera", "palm tree", "glowing star"]),
    ("Sherlock Holmes", ["detective", "magnifying glass tilted left", "footprints"], ["detective", "violin", "magnifying glass tilted left"]),
    ("Tom and Jerry", ["cat", "mouse"], ["cat face", "mouse face", "cheese wedge"]),
    ("Black Friday", ["black heart", "shopping bags", "calendar"], ["shopping cart", "money with wings", "black circle"]),
    ("Great Wall of China", ["brick", "flag: China", "mountain"], ["flag: China", "brick", "person walking"]),
    ("Super Mario", ["mushroom", "man mechanic", "video game"], ["video game", "mushroom", "princess"]),
    ("Big Bang", ["collision", "milky way", "glowing star"], ["collision", "ringed planet", "comet"]),
    ("World Cup", ["soccer ball", "trophy", "globe showing Europe-Africa"], ["trophy", "soccer ball", "world map"]),
    ("Tooth Fairy", ["tooth", "fairy", "coin"], ["fairy", "tooth", "bed"]),
    ("Easter Bunny", ["rabbit", "egg", "basket"], ["rabbit face", "egg", "chocolate bar"]),
    ("Pirates of the Caribbean", ["pirate flag", "desert island", "ship"], ["pirate flag", "man", "sailboat"]),
    ("Game of Thrones", ["crown", "dragon", "chair", "crossed swords"], ["dragon", "snowflake", "crown"]),
    ("The Little Mermaid", ["mermaid", "crab", "crown"], ["mermaid", "water wave", "princess"]),
    ("Moby Dick", ["spouting whale", "closed book", "sailboat"], ["whale", "man", "ship"]),
    ("Winnie the Pooh", ["teddy bear", "honey pot", "honeybee"], ["bear", "honey pot", "red balloon"]),
    ("Statue of Liberty", ["woman", "fire", "flag: United States"], ["torch", "crown", "cityscape"]),
]


def main() -> None:
    answers = [a for a, _, _ in PUZZLES]
    assert len(set(answers)) == len(answers)
    hints = sorted({h for _, c1, c2 in PUZZLES for h in (*c1, *c2)})
    ids = {h: i + 1 for i, h in enumerate(hints)}
    rng = random.Random(11)
    with open("hint_descriptions.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["hintID", "description"])
        for h in hints:
            w.writerow([ids[h], h])
    rows = []
    for answer, first, second in PUZZLES:
        rows += [(answer, first, 1), (answer, second, 2), (answer, first, 3)]
    with open("puzzles.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["datapointID", "subtaskID", "hints", "hints_json", "options", "options_json", "answer"])
        for i, (answer, clue, sub) in enumerate(rows):
            n = {1: 4, 2: 10, 3: 30}[sub]
            opts = rng.sample([x for x in answers if x != answer], n - 1) + [answer]
            rng.shuffle(opts)
            hid = [ids[h] for h in clue]
            w.writerow([f"names_{i:03d}", sub, "|".join(map(str, hid)), json.dumps(hid), "|".join(opts), json.dumps(opts), answer])
    print(len(rows), "puzzles,", len(hints), "emoji")


if __name__ == "__main__":
    main()
