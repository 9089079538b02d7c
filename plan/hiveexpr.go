package plan

import "strings"

// Hive's expression text (LineageLogger's "expression", ExprNodeDesc.getExprString): what it says
// about one source column. Hive gives one text per target column, naming the sources by
// alias.column, db.table.column or column; the analysis reads the function calls, CASE and IF
// around each reference of the column.

// hiveAggregates are Hive's aggregate (and window aggregate) functions, lower case.
var hiveAggregates = set("sum", "count", "avg", "min", "max", "collect_set", "collect_list", "stddev", "stddev_pop",
	"stddev_samp", "std", "variance", "var_pop", "var_samp", "covar_pop", "covar_samp", "corr", "percentile",
	"percentile_approx", "histogram_numeric", "compute_stats", "first_value", "last_value", "regr_slope",
	"regr_intercept", "regr_r2", "regr_count", "regr_avgx", "regr_avgy", "regr_sxx", "regr_syy", "regr_sxy",
	"approx_distinct", "bloom_filter", "compute_bit_vector_hll", "compute_bit_vector_fm")

// hiveMasking are functions whose result hides the value they read: hashes, counts, masks.
var hiveMasking = set("count", "hash", "md5", "sha", "sha1", "sha2", "crc32", "murmur_hash", "mask", "mask_hash",
	"mask_first_n", "mask_last_n", "mask_show_first_n", "mask_show_last_n", "aes_encrypt", "approx_distinct")

// hiveTransparent keep a value as it is (type conversion): a column read through them alone is an IDENTITY.
var hiveTransparent = set("cast", "udftodouble", "udftolong", "udftointeger", "udftostring", "udftoboolean",
	"udftofloat", "udftoshort", "udftobyte", "udftodecimal", "udftotimestamp", "udftodate")

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// hiveUse is what an expression does with one source column.
type hiveUse struct {
	found       bool // the column is referenced in the text
	value       bool // in a value position (not only in CASE WHEN / IF conditions)
	aggregated  bool // a value reference is inside an aggregate
	masked      bool // every value reference is inside a masking function
	conditional bool // a reference is in a CASE WHEN condition or the condition of IF
	identity    bool // the whole expression is the column, through type conversions only
	single      bool // the whole expression is one reference (of any name), through type conversions only
}

type hiveToken struct {
	text  string
	ident bool // an identifier or a dotted name
}

// hiveTokens splits an expression into identifiers (dotted, backquotes removed), parentheses,
// commas and the rest (operators, literals: one token per character run).
func hiveTokens(s string) []hiveToken {
	var out []hiveToken
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')' || c == ',':
			out = append(out, hiveToken{text: string(c)})
			i++
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			out = append(out, hiveToken{text: "?"})
			i = min(j+1, len(s))
		case c == '`' || c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			var b strings.Builder
			j := i
			for j < len(s) {
				if s[j] == '`' {
					k := strings.IndexByte(s[j+1:], '`')
					if k < 0 {
						k = len(s) - j - 1
					}
					b.WriteString(s[j+1 : j+1+k])
					j += k + 2
				} else if s[j] == '.' || s[j] == '_' || s[j] == '$' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9' {
					b.WriteByte(s[j])
					j++
				} else {
					break
				}
			}
			out = append(out, hiveToken{text: b.String(), ident: true})
			i = max(j, i+1)
		default:
			j := i + 1
			for j < len(s) && !strings.ContainsRune(" \t\n\r(),'\"`", rune(s[j])) && !isIdentStart(s[j]) {
				j++
			}
			out = append(out, hiveToken{text: s[i:j]})
			i = j
		}
	}
	return out
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// hiveFrame is an open call, parenthesis or CASE while reading an expression.
type hiveFrame struct {
	fn   string // lower-cased function name; "" for a plain parenthesis; "case"
	arg  int    // argument index (calls)
	cond bool   // CASE: in a WHEN condition (or the operand of a simple CASE)
	typ  bool   // CAST: after AS (the target type)
}

// keywords that are not column references.
var hiveKeywords = set("case", "when", "then", "else", "end", "and", "or", "not", "is", "null", "in", "between",
	"like", "rlike", "regexp", "as", "distinct", "true", "false", "over", "partition", "by", "order", "asc", "desc",
	"rows", "range", "unbounded", "preceding", "following", "current", "row")

// analyzeHive says what expression x does with the column named col (lower case).
func analyzeHive(x, col string) hiveUse {
	var u hiveUse
	toks := hiveTokens(x)
	var stack []hiveFrame
	allMasked := true
	meaningful := 0    // tokens that are neither conversions, their parentheses nor a cast's type
	single := false    // the one meaningful token is a reference of col
	lastIdent := false // the last meaningful token is a reference (of any name)
	for k, t := range toks {
		lower := strings.ToLower(t.text)
		inType := len(stack) > 0 && stack[len(stack)-1].typ
		call := t.ident && k+1 < len(toks) && toks[k+1].text == "("
		switch {
		case t.text == "(":
			fn := ""
			if k > 0 && toks[k-1].ident && !hiveKeywords[strings.ToLower(toks[k-1].text)] {
				fn = strings.ToLower(toks[k-1].text)
			}
			if inType {
				fn = "type"
			}
			stack = append(stack, hiveFrame{fn: fn, typ: inType})
			continue
		case t.text == ")":
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			continue
		case inType:
			continue // a cast's target type: DECIMAL(10,2)
		case t.text == ",":
			if len(stack) > 0 {
				stack[len(stack)-1].arg++
			}
			meaningful++
			continue
		case t.ident && lower == "case":
			stack = append(stack, hiveFrame{fn: "case", cond: true})
			meaningful++
			continue
		case t.ident && (lower == "when"):
			if f := innermost(stack, "case"); f != nil {
				f.cond = true
			}
			meaningful++
			continue
		case t.ident && (lower == "then" || lower == "else"):
			if f := innermost(stack, "case"); f != nil {
				f.cond = false
			}
			meaningful++
			continue
		case t.ident && lower == "end":
			for j := len(stack) - 1; j >= 0; j-- {
				if stack[j].fn == "case" {
					stack = stack[:j]
					break
				}
			}
			meaningful++
			continue
		case t.ident && lower == "as" && len(stack) > 0 && stack[len(stack)-1].fn == "cast":
			stack[len(stack)-1].typ = true
			continue
		}
		if call && hiveTransparent[lower] {
			continue // a conversion: does not count
		}
		meaningful++
		lastIdent = t.ident && !call && !hiveKeywords[lower]
		if !lastIdent {
			continue
		}
		name := lower
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			name = name[i+1:]
		}
		if name != col {
			continue
		}
		u.found = true
		single = meaningful == 1
		cond := false
		agg, masked := false, false
		for _, f := range stack {
			switch {
			case f.fn == "case" && f.cond, f.fn == "if" && f.arg == 0:
				cond = true
			case hiveAggregates[f.fn]:
				agg = true
			}
			if hiveMasking[f.fn] {
				masked = true
			}
		}
		if cond {
			u.conditional = true
			continue
		}
		u.value = true
		u.aggregated = u.aggregated || agg
		allMasked = allMasked && masked
	}
	u.masked = u.value && allMasked
	u.identity = u.found && u.value && single && meaningful == 1
	u.single = meaningful == 1 && lastIdent
	return u
}

// hiveMaskedAll reports whether the whole expression is inside a masking function (after
// conversions): md5(x), count(x), CAST(hash(x) AS string).
func hiveMaskedAll(x string) bool {
	toks := hiveTokens(x)
	for len(toks) > 2 && toks[0].ident && toks[1].text == "(" && toks[len(toks)-1].text == ")" {
		fn := strings.ToLower(toks[0].text)
		if hiveMasking[fn] {
			return true
		}
		if !hiveTransparent[fn] {
			return false
		}
		toks = toks[2 : len(toks)-1]
	}
	return false
}

func innermost(stack []hiveFrame, fn string) *hiveFrame {
	for j := len(stack) - 1; j >= 0; j-- {
		if stack[j].fn == fn {
			return &stack[j]
		}
	}
	return nil
}

// hiveCalls reports whether expression x calls a function of fns.
func hiveCalls(x string, fns map[string]bool) bool {
	toks := hiveTokens(x)
	for k, t := range toks {
		if t.ident && k+1 < len(toks) && toks[k+1].text == "(" && fns[strings.ToLower(t.text)] {
			return true
		}
	}
	return false
}

// Hive writes a windowing expression as its parse tree, e.g. `(tok_function sum (. (tok_table_or_col
// o) amount) (tok_windowspec (tok_partitioningspec (tok_distributeby (. (tok_table_or_col o)
// customer_id)) ...)))`, and lists every column of the window's input as a source, used or not.
// analyzeWindow reads that tree: a column in the window specification (partitioning, ordering)
// decides which rows a value is computed over (INDIRECT WINDOW), one in the function's arguments
// is its value; a source the tree never names is Hive's over-approximation, not lineage.
func isWindowTree(x string) bool { return strings.Contains(strings.ToLower(x), "(tok_windowspec") }

// hiveWindowUse is what a window tree does with one column.
type hiveWindowUse struct {
	found      bool
	window     bool // in a window specification
	value      bool // in a function's arguments (or outside any window function)
	aggregated bool // inside an aggregate function's arguments
	masked     bool // every value reference is inside a masking function
}

func analyzeWindow(x, col string) hiveWindowUse {
	var u hiveWindowUse
	toks := hiveTokens(x)
	type frame struct {
		head string // the list's first token, lower case
		fn   string // tok_function: the function's name
		n    int    // items read so far
	}
	var stack []frame
	allMasked := true
	for k, t := range toks {
		switch t.text {
		case "(":
			head := ""
			if k+1 < len(toks) {
				head = strings.ToLower(toks[k+1].text)
			}
			stack = append(stack, frame{head: head})
			continue
		case ")":
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			if len(stack) > 0 {
				stack[len(stack)-1].n++
			}
			continue
		}
		if len(stack) == 0 {
			continue
		}
		top := &stack[len(stack)-1]
		top.n++
		if top.n == 2 && top.head == "tok_function" {
			top.fn = strings.ToLower(t.text)
			continue
		}
		if top.n == 1 { // the head itself
			continue
		}
		// a column: the last item of (. table col), or the only item of a (tok_table_or_col col)
		// that is not the table of a (. ...)
		isCol := false
		switch top.head {
		case ".":
			isCol = top.n == 3
		case "tok_table_or_col":
			isCol = top.n == 2 && !(len(stack) > 1 && stack[len(stack)-2].head == "." && stack[len(stack)-2].n == 1)
		}
		if !isCol || strings.ToLower(t.text) != col {
			continue
		}
		u.found = true
		inSpec, agg, masked := false, false, false
		for _, f := range stack {
			switch {
			case f.head == "tok_windowspec":
				inSpec = true
			case f.head == "tok_function" && hiveAggregates[f.fn]:
				agg = true
			}
			if f.head == "tok_function" && hiveMasking[f.fn] {
				masked = true
			}
		}
		if inSpec {
			u.window = true
			continue
		}
		u.value = true
		u.aggregated = u.aggregated || agg
		allMasked = allMasked && masked
	}
	u.masked = u.value && allMasked
	return u
}
