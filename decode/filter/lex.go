package filter

import (
	"fmt"
	"strings"
)

type tokKind uint8

const (
	tEOF    tokKind = iota
	tWord           // field names, numbers, addresses, byte strings, keywords
	tString         // "quoted"
	tLParen
	tRParen
	tLBrack
	tRBrack
	tLBrace
	tRBrace
	tComma
	tOp // == != === !== ~= > >= < <= & && || ! ^^
)

type token struct {
	kind tokKind
	text string // for tString: the unescaped value
	pos  int    // byte offset in the expression
	end  int
}

// SyntaxError is a filter that does not compile: what is wrong, where
// (byte offset and length in the expression), and, for an unknown field,
// the closest known names.
type SyntaxError struct {
	Expr    string
	Pos     int
	Len     int
	Msg     string
	Suggest []string
}

// Column returns the 1-based column of the error.
func (e *SyntaxError) Column() int { return e.Pos + 1 }

// Error returns the message, the expression and a caret line under the
// bad token, e.g.
//
//	filter: unknown field "infiniband.reth.rkey" (did you mean infiniband.reth.r_key?) at column 1
//	  infiniband.reth.rkey == 5
//	  ^~~~~~~~~~~~~~~~~~~~
func (e *SyntaxError) Error() string {
	var b strings.Builder
	b.WriteString("filter: ")
	b.WriteString(e.Msg)
	if len(e.Suggest) > 0 {
		b.WriteString(" (did you mean " + strings.Join(e.Suggest, ", ") + "?)")
	}
	fmt.Fprintf(&b, " at column %d\n  %s\n  ", e.Column(), e.Expr)
	b.WriteString(strings.Repeat(" ", len([]rune(e.Expr[:min(e.Pos, len(e.Expr))]))))
	b.WriteString("^")
	if e.Len > 1 {
		b.WriteString(strings.Repeat("~", e.Len-1))
	}
	return b.String()
}

func isWordByte(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '(', ')', '[', ']', '{', '}', ',', '"', '=', '!', '<', '>', '&', '|', '~', '^':
		return false
	}
	return true
}

func lex(expr string) ([]token, error) {
	var toks []token
	errAt := func(pos, n int, format string, a ...any) error {
		return &SyntaxError{Expr: expr, Pos: pos, Len: n, Msg: fmt.Sprintf(format, a...)}
	}
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')' || c == '[' || c == ']' || c == '{' || c == '}' || c == ',':
			k := map[byte]tokKind{'(': tLParen, ')': tRParen, '[': tLBrack, ']': tRBrack, '{': tLBrace, '}': tRBrace, ',': tComma}[c]
			toks = append(toks, token{kind: k, text: expr[i : i+1], pos: i, end: i + 1})
			i++
		case c == '"':
			s, n, err := unquote(expr[i:])
			if err != "" {
				if strings.HasPrefix(err, "unterminated") {
					return nil, errAt(i, len(expr)-i, "%s", err)
				}
				return nil, errAt(i+n, 1, "%s", err)
			}
			toks = append(toks, token{kind: tString, text: s, pos: i, end: i + n})
			i += n
		case strings.ContainsRune("=!<>&|~^", rune(c)):
			op := ""
			for _, cand := range []string{"===", "!==", "==", "!=", "~=", ">=", "<=", "&&", "||", "^^", ">", "<", "&", "!", "~"} {
				if strings.HasPrefix(expr[i:], cand) {
					op = cand
					break
				}
			}
			if op == "" {
				return nil, errAt(i, 1, "unexpected %q", string(c))
			}
			toks = append(toks, token{kind: tOp, text: op, pos: i, end: i + len(op)})
			i += len(op)
		default:
			j := i
			for j < len(expr) && isWordByte(expr[j]) {
				j++
			}
			toks = append(toks, token{kind: tWord, text: expr[i:j], pos: i, end: j})
			i = j
		}
	}
	toks = append(toks, token{kind: tEOF, pos: len(expr), end: len(expr)})
	return toks, nil
}

// unquote reads a double-quoted string at the start of s, with Wireshark's
// escapes (\" \\ \n \t \r \xHH \NNN). It returns the value, the number of
// bytes consumed, and an error message.
func unquote(s string) (string, int, string) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			return b.String(), i + 1, ""
		case '\\':
			i++
			if i >= len(s) {
				return "", i, "unterminated string"
			}
			switch e := s[i]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'x':
				if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
					b.WriteByte(hexVal(s[i+1])<<4 | hexVal(s[i+2]))
					i += 2
				} else {
					return "", i, `\x needs two hex digits`
				}
			case '0', '1', '2', '3', '4', '5', '6', '7':
				if i+2 < len(s) && s[i+1] >= '0' && s[i+1] <= '7' && s[i+2] >= '0' && s[i+2] <= '7' {
					b.WriteByte((e-'0')<<6 | (s[i+1]-'0')<<3 | (s[i+2] - '0'))
					i += 2
				} else {
					return "", i, `octal escape needs three digits (\NNN)`
				}
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", len(s), "unterminated string: add the closing \""
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
