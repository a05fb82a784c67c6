"""The preset dictionary of chunk format 3 (autoport.history.codec): text a chunk's
header is likely to repeat (its column descriptions and the shapes of the values, with
their units and enum words), so that the compressor writes a reference to it instead of
the text. A small chunk's header was most of it: 150-170 of a 1-point chunk's 155 bytes,
about 160 bytes a chunk of the simulator's mix (9 % of its chunks' bytes after half a day).

Made once from the headers of the chunks of `python -m bench history`'s mix (the sandbox's
capabilities: one header per shape, the least common first, after the units and enum
words, since the compressor reaches text near the end of the dictionary more cheaply).
It defines format 3: changed, it would no longer read the chunks written with it, so a
better dictionary is a new format number with this one kept for reading.
"""

DICTIONARY = (
    b'["kwh_per_100_kilometers","charging","charging_complete","plugged_in","disconnec'
    b'ted","not_charging","on","seconds","kilowatts","liters","liters_per_100_kilomete'
    b'rs","lock","minutes","degrees","volts","enabled","ok","normal","meters","kilomet'
    b'ers_per_hour","celsius","front_left","bars","front_right","rear_right","rear_lef'
    b't","kilometers","locked","closed"]{"n":2139,"t":{"o":2,"f":[1767227600,-17672275'
    b'99],"w":0},"tu":{"o":0,"f":[],"b":20,"m":174},"r":{"d":1,"o":0,"f":[],"b":21,"m"'
    b':200058},"s":{"o":0,"f":[],"w":0},"shapes":[[["{\\"data\\":{\\"distance\\":{\\"un'
    b'it\\":",",\\"value\\":","},\\"time\\":{\\"unit\\":",",\\"value\\":","}},\\"timesta'
    b'mp\\":","}"],"SFSFT"]],"c":[{"k":"dict","d":["kilometers"],"o":0,"f":[],"w":0},{"'
    b'k":"dec","p":3,"o":2,"f":[21453,-21442],"b":4,"m":-6},{"k":"dict","d":["seconds"'
    b'],"o":0,"f":[],"w":0},{"k":"dec","p":0,"o":2,"f":[2001,-2000],"w":0},{"w":0}]}{"'
    b'n":3,"t":{"o":1,"f":[1767225600375629],"w":5},"r":{"d":1,"o":0,"f":[],"b":21,"m"'
    b':476879},"s":{"o":0,"f":[],"w":0},"shapes":[[["[{\\"data\\":{\\"location\\":",",\\"pr'
    b'essure\\":{\\"unit\\":",",\\"value\\":","}},\\"timestamp\\":","},{\\"data\\":{\\"l'
    b'ocation\\":",",\\"pressure\\":{\\"unit\\":",",\\"value\\":","}},\\"timestamp\\":","},'
    b'{\\"data\\":{\\"location\\":",",\\"pressure\\":{\\"unit\\":",",\\"value\\":","}},\\'
    b'"timestamp\\":","},{\\"data\\":{\\"location\\":",",\\"pressure\\":{\\"unit\\":","'
    b',\\"value\\":","}},\\"timestamp\\":","}]"],"SSFTSSFTSSFTSSFT"]],"c":[{"k":"dict","d"'
    b':["front_left"],"o":0,"f":[],"w":0},{"k":"dict","d":["bars"],"o":0,"f":[],"w":0}'
    b',{"k":"dec","p":2,"o":0,"f":[],"b":2,"m":240},{"w":0},{"k":"dict","d":["front_ri'
    b'ght"],"o":0,"f":[],"w":0},{"k":"dict","d":["bars"],"o":0,"f":[],"w":0},{"k":"dec'
    b'","p":2,"o":0,"f":[],"b":2,"m":240},{"w":0},{"k":"dict","d":["rear_right"],"o":0'
    b',"f":[],"w":0},{"k":"dict","d":["bars"],"o":0,"f":[],"w":0},{"k":"dec","p":2,"o"'
    b':0,"f":[],"b":2,"m":230},{"w":0},{"k":"dict","d":["rear_left"],"o":0,"f":[],"w":'
    b'0},{"k":"dict","d":["bars"],"o":0,"f":[],"w":0},{"k":"dec","p":2,"o":0,"f":[],"b'
    b'":2,"m":230},{"w":0}]}{"n":1,"t":{"o":0,"f":[],"b":0,"m":1767225600350410},"r":{'
    b'"d":0,"o":0,"f":[],"b":0,"m":1767225602186825},"s":{"o":0,"f":[],"w":0},"shapes"'
    b':[[["[{\\"data\\":{\\"location\\":",",\\"lock_state\\":","},\\"timestamp\\":","},{\\"'
    b'data\\":{\\"location\\":",",\\"lock_state\\":","},\\"timestamp\\":","},{\\"data\\'
    b'":{\\"location\\":",",\\"lock_state\\":","},\\"timestamp\\":","},{\\"data\\":{\\"loca'
    b'tion\\":",",\\"lock_state\\":","},\\"timestamp\\":","}]"],"SSTSSTSSTSST"]],"c":[{"k":'
    b'"dict","d":["front_left"],"o":0,"f":[],"w":0},{"k":"dict","d":["locked"],"o":0,"'
    b'f":[],"w":0},{"w":0},{"k":"dict","d":["front_right"],"o":0,"f":[],"w":0},{"k":"d'
    b'ict","d":["locked"],"o":0,"f":[],"w":0},{"w":0},{"k":"dict","d":["rear_right"],"'
    b'o":0,"f":[],"w":0},{"k":"dict","d":["locked"],"o":0,"f":[],"w":0},{"w":0},{"k":"'
    b'dict","d":["rear_left"],"o":0,"f":[],"w":0},{"k":"dict","d":["locked"],"o":0,"f"'
    b':[],"w":0},{"w":0}]}{"n":1,"t":{"o":0,"f":[],"b":0,"m":1767225600801252},"r":{"d'
    b'":0,"o":0,"f":[],"b":0,"m":1767225601047349},"s":{"o":0,"f":[],"w":0},"shapes":['
    b'[["{\\"data\\":{\\"unit\\":",",\\"value\\":","},\\"timestamp\\":","}"],"SIT"]],"c":['
    b'{"k":"dict","d":["kilometers"],"o":0,"f":[],"w":0},{"k":"int","o":0,"f":[],"b":0'
    b',"m":9487},{"w":0}]}{"n":2000,"t":{"o":1,"f":[1767225600],"b":6,"m":1},"tu":{"o"'
    b':0,"f":[],"b":20,"m":373},"r":{"d":1,"o":0,"f":[],"b":21,"m":200861},"s":{"o":0,'
    b'"f":[],"w":0},"shapes":[[["{\\"data\\":{\\"latitude\\":",",\\"longitude\\":","},\\"'
    b'timestamp\\":","}"],"FFT"]],"c":[{"k":"dec","p":6,"o":2,"f":[52514525,-52514541],'
    b'"w":1},{"k":"dec","p":6,"o":2,"f":[13350088,-13350124],"w":1},{"w":0}]}{"n":1,"t'
    b'":{"o":0,"f":[],"b":0,"m":1767225600506577},"r":{"d":0,"o":0,"f":[],"b":0,"m":17'
    b'67225602362344},"s":{"o":0,"f":[],"w":0},"shapes":[[["[{\\"data\\":{\\"location\\":"'
    b',",\\"position\\":","},\\"timestamp\\":","},{\\"data\\":{\\"location\\":",",\\"positi'
    b'on\\":","},\\"timestamp\\":","},{\\"data\\":{\\"location\\":",",\\"position\\":",'
    b'"},\\"timestamp\\":","},{\\"data\\":{\\"location\\":",",\\"position\\":","},\\"timest'
    b'amp\\":","}]"],"SSTSSTSSTSST"]],"c":[{"k":"dict","d":["front_left"],"o":0,"f":[],'
    b'"w":0},{"k":"dict","d":["closed"],"o":0,"f":[],"w":0},{"w":0},{"k":"dict","d":["'
    b'front_right"],"o":0,"f":[],"w":0},{"k":"dict","d":["closed"],"o":0,"f":[],"w":0}'
    b',{"w":0},{"k":"dict","d":["rear_right"],"o":0,"f":[],"w":0},{"k":"dict","d":["cl'
    b'osed"],"o":0,"f":[],"w":0},{"w":0},{"k":"dict","d":["rear_left"],"o":0,"f":[],"w'
    b'":0},{"k":"dict","d":["closed"],"o":0,"f":[],"w":0},{"w":0}]}{"n":2717,"t":{"o":'
    b'1,"f":[1767225600],"b":1,"m":1},"tu":{"o":0,"f":[],"b":20,"m":628},"r":{"d":1,"o'
    b'":0,"f":[],"b":21,"m":200292},"s":{"o":0,"f":[],"w":0},"shapes":[[["{\\"data\\":",'
    b'",\\"timestamp\\":","}"],"FT"]],"c":[{"k":"dec","p":4,"o":2,"f":[2791,-2790],"w":0'
    b'},{"w":0}]}{"n":2,"t":{"o":1,"f":[1767225600027001],"w":5},"r":{"d":0,"o":1,"f":'
    b'[1767225601712045],"w":5},"s":{"o":0,"f":[],"w":0},"shapes":[[["{\\"data\\":",",\\"'
    b'timestamp\\":","}"],"ST"]],"c":[{"k":"dict","d":["charging","charging_complete"],'
    b'"o":0,"f":[],"b":1,"m":0},{"w":0}]}{"n":2000,"t":{"o":1,"f":[1767225600],"b":6,"'
    b'm":1},"tu":{"o":0,"f":[],"b":20,"m":373},"r":{"d":1,"o":0,"f":[],"b":21,"m":2008'
    b'61},"s":{"o":0,"f":[],"w":0},"shapes":[[["{\\"data\\":{\\"unit\\":",",\\"value\\":'
    b'","},\\"timestamp\\":","}"],"SFT"]],"c":[{"k":"dict","d":["kilometers"],"o":0,"f":'
    b'[],"w":0},{"k":"dec","p":3,"o":2,"f":[36426201,-36426198],"b":4,"m":-5},{"w":0}]'
    b"}"
)
