package workload

// words is the synthetic generator's vocabulary: common English words of
// varied length, so that generated text tokenizes roughly like prose.
var words = []string{
	"the", "of", "and", "to", "in", "is", "was", "for", "that", "with", "as", "on", "by", "at", "from",
	"this", "which", "or", "be", "are", "an", "were", "had", "has", "have", "not", "but", "their", "its",
	"river", "mountain", "window", "garden", "engine", "library", "harbour", "market", "winter", "summer",
	"letter", "journey", "question", "answer", "machine", "history", "science", "village", "station",
	"morning", "evening", "forest", "island", "bridge", "castle", "kitchen", "doctor", "teacher", "farmer",
	"painter", "sailor", "soldier", "student", "captain", "council", "theory", "method", "signal", "network",
	"pattern", "surface", "measure", "balance", "contract", "distance", "pressure", "weather", "language",
	"picture", "message", "problem", "process", "product", "program", "project", "quality", "reason",
	"record", "report", "result", "season", "service", "society", "system", "travel", "valley", "volume",
	"walk", "write", "read", "build", "carry", "follow", "gather", "listen", "measure", "notice", "open",
	"promise", "reach", "remember", "return", "search", "settle", "share", "study", "travel", "understand",
	"wander", "watch", "wonder", "explain", "consider", "describe", "discover", "imagine", "improve",
	"quiet", "bright", "narrow", "ancient", "careful", "curious", "distant", "eager", "gentle", "golden",
	"hollow", "honest", "modern", "patient", "rapid", "silent", "simple", "steady", "strange", "tender",
	"useful", "vivid", "warm", "wild", "yellow", "crimson", "frozen", "hidden", "little", "northern",
	"always", "almost", "already", "perhaps", "quickly", "rarely", "slowly", "together", "yesterday",
	"because", "although", "before", "after", "during", "between", "beneath", "beyond", "through", "within",
	"copper", "marble", "timber", "cotton", "silver", "paper", "glass", "stone", "water", "bread", "salt",
	"lantern", "compass", "anchor", "ladder", "blanket", "basket", "candle", "mirror", "pencil", "ribbon",
	"orchard", "meadow", "canyon", "glacier", "lagoon", "prairie", "tundra", "volcano", "delta", "plateau",
	"seventeen", "ninety", "twelve", "dozen", "hundred", "thousand", "million", "first", "second", "third",
}
