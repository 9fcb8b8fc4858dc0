package index

import (
	"strings"
)

// Word forms. The Porter stemmer joins regular inflections ("deploying",
// "deployed"), but not the forms English makes otherwise: irregular verbs
// and nouns ("went" and "go", "children" and "child", "bought" and
// "buy"), and the spellings of British and American English ("colour" and
// "color", "organise" and "organize", "centre" and "center", "grey" and
// "gray"). A memory that says "we bought the grey one" should answer
// "what did we buy" and "which gray one". So before stemming each word
// is taken to one form (wordForm): an irregular form to its base, a
// spelling to the American one. It applies to memories and queries alike,
// so either form finds the other; comparatives are left alone ("better"
// is not "good": it says something else).
//
// Only forms that name one word are listed: "left" is leave (the direction
// is rarer in notes than leaving), but "bit" (a little), "rose" (the
// flower), "lay", "ground", "wound", "bound", "drew" (a name), "lives"
// and "leaves" (nouns and verbs at once) are not.

// irregularVerbs is one verb a line: its base, then its other forms.
var irregularVerbs = []string{
	"arise arose arisen", "awake awoke awoken", "become became", "befall befell befallen",
	"begin began begun", "behold beheld", "bend bent", "bite bitten", "bleed bled",
	"blow blew blown", "break broke broken", "breed bred", "bring brought",
	"build built", "burn burnt", "buy bought", "catch caught",
	"choose chose chosen", "cling clung", "come came", "creep crept", "deal dealt",
	"dig dug", "dream dreamt", "drink drank drunk", "drive drove driven", "dwell dwelt",
	"eat ate eaten", "fall fell fallen", "feed fed", "feel felt", "fight fought",
	"find found", "flee fled", "fling flung", "fly flew flown", "forbid forbade forbidden",
	"foresee foresaw foreseen", "foretell foretold",
	"forget forgot forgotten", "forgive forgave forgiven", "forsake forsook forsaken",
	"freeze froze frozen", "get got gotten", "give gave given", "go went gone",
	"grow grew grown", "hang hung", "hear heard", "hide hid hidden",
	"hold held", "keep kept", "kneel knelt", "know knew known", "lead led", "lean leant",
	"leap leapt", "learn learnt", "leave left", "lend lent", "light lit", "lose lost",
	"make made", "mean meant", "meet met", "mislead misled", "mistake mistook mistaken",
	"misunderstand misunderstood", "outgrow outgrew outgrown", "overcome overcame",
	"overhear overheard", "overtake overtook overtaken", "oversee oversaw overseen",
	"oversleep overslept", "pay paid", "rebuild rebuilt", "redo redid redone",
	"remake remade", "resell resold", "retell retold", "rewrite rewrote rewritten",
	"ride rode ridden", "ring rang rung", "rise risen", "run ran", "say said",
	"see saw seen", "seek sought", "sell sold", "send sent", "sew sewn", "shake shook shaken",
	"shine shone", "shoot shot", "show shown", "shrink shrank shrunk", "sing sang sung",
	"sink sank sunk", "sit sat", "slay slain", "sleep slept", "slide slid", "sling slung",
	"smell smelt", "speak spoke spoken", "speed sped", "spell spelt", "spend spent",
	"spill spilt", "spin spun", "spit spat", "spoil spoilt", "spring sprang sprung",
	"stand stood", "steal stole stolen", "stick stuck", "sting stung", "stink stank stunk",
	"stride strode stridden", "strike struck stricken", "string strung", "strive strove striven",
	"swear swore sworn", "sweep swept", "swim swam swum", "swing swung", "take took taken",
	"teach taught", "tear tore torn", "tell told", "think thought", "throw threw thrown",
	"tread trod trodden", "undergo underwent undergone", "understand understood",
	"undertake undertook undertaken", "undo undid undone", "uphold upheld",
	"wake woke woken", "wear wore worn", "weave wove woven", "weep wept", "win won",
	"withdraw withdrew withdrawn", "withhold withheld", "withstand withstood",
	"wring wrung", "write wrote written",
}

// irregularNouns is one noun a line: its singular, then its plural.
var irregularNouns = []string{
	"child children", "grandchild grandchildren", "stepchild stepchildren",
	"schoolchild schoolchildren", "man men", "woman women", "person people",
	"mouse mice", "louse lice", "foot feet", "tooth teeth", "goose geese", "ox oxen",
	"wife wives", "knife knives", "half halves", "wolf wolves", "shelf shelves",
	"calf calves", "loaf loaves", "thief thieves", "elf elves", "cactus cacti",
	"fungus fungi", "nucleus nuclei", "radius radii", "stimulus stimuli",
	"syllabus syllabi", "alumnus alumni", "crisis crises", "thesis theses",
	"hypothesis hypotheses", "phenomenon phenomena", "criterion criteria",
	"index indices", "appendix appendices", "matrix matrices", "vertex vertices",
}

// spellings is one word a line: its American spelling, then the others
// (British, or a common variant), inflected forms included where the
// stemmer would not join them.
var spellings = []string{
	"gray grey greys greyed greying", "grayish greyish", "grayness greyness",
	"impostor imposter imposters",
	"defense defence defences", "offense offence offences", "license licence licences",
	"pretense pretence", "judgment judgement judgements", "acknowledgment acknowledgement acknowledgements",
	"program programme programmes", "catalog catalogue catalogues catalogued",
	"dialog dialogue dialogues", "analog analogue analogues", "jewelry jewellery",
	"mom mum mums", "aluminum aluminium", "pajamas pyjamas", "plow plough ploughs ploughed",
	"skeptic sceptic sceptics", "skeptical sceptical", "skepticism scepticism",
	"mold mould moulds mouldy", "mustache moustache", "cozy cosy", "artifact artefact artefacts",
	"maneuver manoeuvre manoeuvres manoeuvred", "pediatric paediatric", "pediatrician paediatrician",
	"encyclopedia encyclopaedia", "toward towards", "among amongst", "while whilst",
	"donut doughnut doughnuts", "enroll enrol enrols", "enrollment enrolment",
	"fulfill fulfil fulfils", "fulfillment fulfilment", "skillful skilful", "install instal",
	"installment instalment", "willful wilful", "ok okay",
	"practice practise practised practising", "whiskey whisky", "tire tyre tyres",
}

// ourWords are the words British English writes with -our and American
// with -or; a word that begins with one (colourful, neighbourhood,
// favourite) is written with -or too. Others that end in -our (four,
// hour, tour, flour, your, devour) are the same in both.
var ourWords = []string{
	"ardour", "armour", "behaviour", "candour", "clamour", "colour", "endeavour", "favour",
	"flavour", "harbour", "honour", "humour", "labour", "neighbour", "odour", "parlour",
	"rancour", "rigour", "rumour", "saviour", "savour", "splendour", "tumour", "valour",
	"vapour", "vigour",
}

// reWords are the words British English ends in -re and American in -er
// ("centre", "center"), with "metre" in any compound (kilometre).
var reWords = []string{
	"calibre", "centre", "fibre", "goitre", "litre", "lustre", "meagre", "metre", "mitre",
	"ochre", "sabre", "sceptre", "sombre", "spectre", "theatre",
}

// iseWords are words in -ise that are never -ize, whole (rise, noise) or
// as an ending (-wise, -vise, -cise, -prise: advise, exercise, surprise).
var (
	iseWords = []string{
		"advertise", "anise", "apprise", "arise", "bruise", "chaise", "chastise", "chemise",
		"cerise", "compromise", "cruise", "demise", "despise", "disguise", "elise", "denise",
		"expertise", "franchise", "guise", "louise", "marquise", "merchandise", "mortise",
		"noise", "paradise", "poise", "porpoise", "praise", "appraise", "premise", "promise",
		"raise", "reprise", "rise", "sunrise", "moonrise", "uprise", "surmise", "tortoise", "treatise",
		"turquoise", "valise", "vise",
	}
	iseEndings = []string{
		"wise", "vise", "cise", "prise", "raise", "noise", "poise", "cruise", "bruise", "guise",
		"promise", "franchise", "merchandise", "expertise", "advertise",
	}
)

var (
	// wordFormMap maps each listed form to its base or American spelling.
	wordFormMap = func() map[string]string {
		m := map[string]string{}
		for _, lines := range [][]string{irregularVerbs, irregularNouns, spellings} {
			for _, l := range lines {
				f := strings.Fields(l)
				for _, w := range f[1:] {
					if w != f[0] {
						m[w] = f[0]
					}
				}
			}
		}
		return m
	}()
	iseException = setOf(iseWords)
	reWordSet    = setOf(reWords)
)

func setOf(words []string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// iseSuffixes are the endings of -ise verbs and their derivations, each
// with its -ize form.
var iseSuffixes = [...][2]string{
	{"isations", "izations"}, {"isation", "ization"}, {"isers", "izers"}, {"ising", "izing"},
	{"ised", "ized"}, {"ises", "izes"}, {"iser", "izer"}, {"ise", "ize"}, {"isable", "izable"},
}

// lyseSuffixes are the same for -yse verbs (analyse, paralyse).
var lyseSuffixes = [...][2]string{
	{"lysers", "lyzers"}, {"lysing", "lyzing"}, {"lysed", "lyzed"}, {"lyses", "lyzes"},
	{"lyser", "lyzer"}, {"lyse", "lyze"},
}

// wordForm returns the form word (lower case, as the analyser's filters
// leave it) is indexed and searched by, and whether it differs.
func wordForm(word string) (string, bool) {
	if len(word) < 3 {
		return word, false
	}
	if w, ok := wordFormMap[word]; ok {
		return w, true
	}
	if strings.HasSuffix(word, "men") {
		// policewomen, firemen, businessmen (not specimen, abdomen)
		if base, ok := strings.CutSuffix(word, "women"); ok && base != "" {
			return base + "woman", true
		}
		if base, _ := strings.CutSuffix(word, "men"); len(base) >= 4 && menCompound[base] {
			return base + "man", true
		}
	}
	if strings.HasSuffix(word, "children") {
		return strings.TrimSuffix(word, "ren"), true
	}
	if w, ok := ourForm(word); ok {
		return w, true
	}
	if w, ok := reForm(word); ok {
		return w, true
	}
	for _, s := range lyseSuffixes {
		if base, ok := strings.CutSuffix(word, s[0]); ok && len(base) >= 2 {
			return base + s[1], true
		}
	}
	if w, ok := iseForm(word); ok {
		return w, true
	}
	if w, ok := doubledL(word); ok {
		return w, true
	}
	return word, false
}

// menCompound are the words before -men in compounds that say "men":
// firemen, policemen.
var menCompound = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("police fire fisher business chair gentle sports sales crafts spokes congress country fresh noble horse work trades middle camera sea bats clergy committee fore states door kins line yeo alder journey mail repair cave snow handy") {
		m[w] = true
	}
	return m
}()

// ourForm spells a word that begins with one of ourWords with -or.
func ourForm(word string) (string, bool) {
	i := strings.Index(word, "our")
	if i < 2 {
		return word, false
	}
	for _, w := range ourWords {
		if strings.HasPrefix(word, w) {
			return word[:len(w)-3] + "or" + word[len(w):], true
		}
	}
	return word, false
}

// reForm spells the -re words (centre, centres, centred, kilometre) with -er.
func reForm(word string) (string, bool) {
	for _, end := range [...][2]string{{"res", "ers"}, {"red", "ered"}, {"re", "er"}} {
		base, ok := strings.CutSuffix(word, end[0])
		if !ok {
			continue
		}
		whole := base + "re"
		if reWordSet[whole] || strings.HasSuffix(whole, "metre") {
			return base + end[1], true
		}
	}
	if base, ok := strings.CutSuffix(word, "ring"); ok && reWordSet[base+"re"] {
		return base + "ering", true // centring
	}
	return word, false
}

// iseForm spells -ise words and their derivations with -ize, unless the
// word is one that is never -ize.
func iseForm(word string) (string, bool) {
	for _, s := range iseSuffixes {
		base, ok := strings.CutSuffix(word, s[0])
		if !ok {
			continue
		}
		whole := base + "ise"
		if len(base) < 3 || iseException[whole] || !hasVowel(base) {
			return word, false
		}
		for _, e := range iseEndings {
			if strings.HasSuffix(whole, e) {
				return word, false
			}
		}
		return base + s[1], true
	}
	return word, false
}

// doubledL is the American single l of a British doubled one after "ue"
// or "ia" (fuelled, dialling, duellers, trialled), which the stemmer does
// not join; after one vowel (travelled, cancelling) it does.
func doubledL(word string) (string, bool) {
	for _, end := range [...]string{"lled", "lling", "llers", "ller"} {
		base, ok := strings.CutSuffix(word, end)
		if !ok || len(base) < 3 {
			continue
		}
		pair := base[len(base)-2:]
		if (pair == "ue" || pair == "ia") && !isVowel(base[len(base)-3]) && base[len(base)-3] != 'q' {
			return base + end[1:], true
		}
	}
	return word, false
}

func isVowel(c byte) bool { return strings.IndexByte("aeiou", c) >= 0 }

func hasVowel(s string) bool { return strings.ContainsAny(s, "aeiouy") }
