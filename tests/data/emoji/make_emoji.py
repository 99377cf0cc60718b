"""One-off generator of tests/data/emoji (kept out of the repo: the CSVs are the artefact)."""
import csv, json, random
hints = ["sun", "flower", "droplet", "fire", "house", "deciduous tree", "snowflake", "cloud", "crescent moon", "star",
 "fish", "water wave", "bread", "cow face", "glass of milk", "honeybee", "honey pot", "open book", "pencil", "school",
 "automobile", "motorway", "locomotive", "railway track", "airplane", "ticket", "dog face", "cat face", "bone", "red apple",
 "pie", "cloud with rain", "umbrella", "snow-capped mountain", "person", "soccer ball", "foot", "hospital", "syringe", "musical note",
 "guitar", "microphone", "mantelpiece clock", "bell", "baby", "baby bottle", "key", "door", "locked", "light bulb",
 "night with stars", "egg", "chicken", "cooking", "sheaf of rice", "ship", "anchor", "hot beverage", "teacup without handle", "leaf",
 "money bag", "bank", "page", "envelope", "mailbox", "ice", "soft ice cream", "bicycle", "wheel", "hammer",
 "nut and bolt", "tooth", "toothbrush", "crown", "castle", "man", "woman", "ear of corn", "herb", "wrench"]
ids = {h: i + 1 for i, h in enumerate(hints)}
puzzles = [
 (["flower", "sun"], "sunflower"), (["person", "snowflake"], "snowman"), (["house", "deciduous tree"], "treehouse"),
 (["fire", "house"], "fireplace"), (["house", "light bulb", "water wave"], "lighthouse"), (["fish", "star"], "starfish"),
 (["cow face", "glass of milk"], "dairy"), (["honeybee", "honey pot"], "beekeeper"), (["person", "school", "open book"], "student"),
 (["automobile", "motorway"], "traffic jam"), (["locomotive", "railway track"], "railway station"), (["airplane", "ticket"], "flight"),
 (["dog face", "house"], "kennel"), (["dog face", "baby"], "puppy"), (["cat face", "baby"], "kitten"),
 (["red apple", "pie"], "apple pie"), (["cloud", "droplet"], "rain"), (["snow-capped mountain", "snowflake", "person"], "skier"),
 (["soccer ball", "foot"], "football"), (["person", "hospital"], "patient"), (["syringe", "hospital"], "vaccination"),
 (["person", "musical note", "guitar"], "guitarist"), (["person", "musical note", "microphone"], "singer"),
 (["mantelpiece clock", "bell"], "alarm clock"), (["key", "door", "locked"], "keyhole"), (["night with stars", "crescent moon"], "midnight"),
 (["egg", "chicken"], "hen"), (["egg", "cooking"], "omelette"), (["sheaf of rice", "bread"], "flour"),
 (["ship", "anchor"], "harbour"), (["hot beverage", "teacup without handle"], "teapot"), (["money bag", "bank"], "savings"),
 (["envelope", "mailbox", "page"], "letter"), (["ice", "soft ice cream"], "frozen dessert"), (["sun", "cloud with rain"], "rainbow"),
 (["person", "bicycle", "wheel"], "cyclist"), (["person", "hammer", "nut and bolt"], "mechanic"), (["tooth", "toothbrush"], "dentist"),
 (["castle", "crown"], "palace"), (["crown", "man"], "king"), (["crown", "woman"], "queen"), (["person", "fish", "ship"], "fisherman"),
 (["leaf", "herb"], "garden"), (["ear of corn", "sheaf of rice"], "harvest"),
]
answers = [a for _, a in puzzles]
assert len(set(answers)) == len(answers)
rng = random.Random(7)
with open("hint_descriptions.csv", "w", newline="") as f:
    w = csv.writer(f); w.writerow(["hintID", "description"])
    for h in hints: w.writerow([ids[h], h])
with open("puzzles.csv", "w", newline="") as f:
    w = csv.writer(f); w.writerow(["datapointID", "subtaskID", "hints", "hints_json", "options", "options_json", "answer"])
    for i, (hs, a) in enumerate(puzzles):
        sub = 1 + i % 3
        n = {1: 4, 2: 10, 3: 30}[sub]
        opts = rng.sample([x for x in answers if x != a], n - 1) + [a]
        rng.shuffle(opts)
        hid = [ids[h] for h in hs]
        w.writerow([f"emoji_{i:03d}", sub, "|".join(map(str, hid)), json.dumps(hid), "|".join(opts), json.dumps(opts), a])
print(len(puzzles))
