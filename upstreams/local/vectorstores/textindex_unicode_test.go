package vectorstores

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// worldWords are words of many scripts: accented Latin (precomposed and
// with combining marks), German, Turkish, Cyrillic, Greek (with
// tonos and polytonic), Armenian, Hebrew, Arabic (and its digits),
// Devanagari, Thai, CJK, kana, Hangul, full-width Latin, ligatures,
// Deseret (folded outside the BMP), mixed scripts and private use.
var worldWords = strings.Fields("café crème élève forêt où naïve Noël hôpital garçon déjà façade été résumé " +
	"cafe\u0301 e\u0301le\u0300ve n\u0303o Müller Straße über Größe schön Fußgänger Bücher Äpfel Öl STRASSE " +
	"İstanbul ıspanak Ağaç şehir привет мир Москва ёлка Ёж данные поиск ДАННЫЕ Поиска Ελλάδα αθήνα λόγος " +
	"ΣΟΦΙΑ σοφία ψυχή ὁδός Ἀθῆναι Հայաստան שלום עברית بحث عربي ١٢٣ ४५६ हिन्दी ภาษาไทย 東京 北京 漢字 " +
	"日本語 検索 データ ひらがな カタカナ 한국어 검색 ＡＢＣ ｆｕｌｌ ﬁle ﬂow Ǆemal ǅemal 𐐀𐐨𐐩 caféпривет " +
	"abc東京 x\ue000y \ue001\ue002 ŒUVRE œuvre Ærø Łódź Ørsted Þór ðe Ŋ ĲSSEL ĳs")

// worldSeps are separators outside ASCII: punctuation, spaces, symbols
// and emoji.
var worldSeps = []string{" ", " ", ", ", "。", "、", "«", "»", "—", "\u00a0", "\u3000", "🙂", "🚀", "€", "№", "؟", "¿", "•", "\u200b"}

// worldText is generatedText with words of worldWords, in upper case
// too, and random runs of letters from a few scripts between them.
func worldText(r *rand.Rand, words int) string {
	ranges := [][2]rune{{0xc0, 0x24f}, {0x370, 0x3ff}, {0x400, 0x4ff}, {0x4e00, 0x4e40}, {0x1e00, 0x1eff}, {0x300, 0x36f}}
	var b strings.Builder
	for i := range words {
		if i > 0 {
			b.WriteString(worldSeps[r.IntN(len(worldSeps))])
		}
		switch r.IntN(8) {
		case 0:
			b.WriteString(generatedText(r, 1))
		case 1:
			b.WriteString(strings.ToUpper(worldWords[r.IntN(len(worldWords))]))
		case 2:
			rg := ranges[r.IntN(len(ranges))]
			for range 1 + r.IntN(6) {
				b.WriteRune(rg[0] + r.Int32N(rg[1]-rg[0]))
			}
		default:
			b.WriteString(worldWords[r.IntN(len(worldWords))])
		}
	}
	return b.String()
}

// TestTextIndexMatchesFTS5Multilingual: on 1,500 chunks of text in many
// scripts (400 under the race detector), with combining marks, private
// use characters, emoji and letters FTS5 folds by its own tables, the
// store is ranked from its text index (not left to FTS5) and the index
// ranks as FTS5's bm25() does, for queries of words of every script in
// either case, filtered or not, then after files are deleted and after
// more are added.
func TestTextIndexMatchesFTS5Multilingual(t *testing.T) {
	s := openSQLite(t)
	storeID := newVectorStore(t, s)
	files, added, nq := 150, 20, 60
	if raceEnabled {
		files, added, nq = 40, 6, 20
	}
	r := rand.New(rand.NewPCG(61, 61))
	fillCorpus(t, s, storeID, r, 0, files, worldText)
	queries := queriesOf(r, nq, worldWords, worldText, "café", "CAFÉ cafe", "Straße STRASSE strasse", "ДАННЫЕ данные поиск",
		"東京 北京", "ǆemal", "𐐀𐐨𐐩", "σοφία ΣΟΦΙΑ", "œuvre everywhere", "١٢٣ seldom", "ﬁle file")
	checkThroughChanges(t, NewCache(0), s, storeID, queries, r, files, added, worldText)
}
