package config

import (
	"encoding"
	"fmt"
	"reflect"
	"time"

	"github.com/spf13/pflag"
)

// BindFlag defines the flag name on fs bound to the field at key of root
// (a pointer to a Config, a Target or any configuration struct; key as
// FieldAt takes it): its default is the field's current value, and a flag
// given writes the field, parsed by the field's own rule (a Duration by
// Duration.UnmarshalText). The one-shot commands build their configuration
// this way, a flag per key. It panics when key names no field, or a field
// of a type no flag takes: a programming error every test catches.
func BindFlag(fs *pflag.FlagSet, root any, key, name, help string) {
	v, ok := FieldAt(root, key)
	if !ok {
		panic("config: flag --" + name + " names no configuration key: " + key)
	}
	flagFor(fs, name, help, v, true)
}

// flagFor defines the flag name for the field v, defaulting to its value:
// bound to it (bind), or, for a layer Load reads (RegisterFlags), left
// unbound, its text decoded by Load with the file's values, so that an
// error names the flag as the value's source. The one type switch of both.
func flagFor(fs *pflag.FlagSet, name, help string, v reflect.Value, bind bool) {
	if !bind {
		scratch := reflect.New(v.Type()).Elem() // the flag's value lives in fs
		scratch.Set(v)
		v = scratch
	}
	switch p := v.Addr().Interface().(type) {
	case *Duration:
		if bind {
			fs.Var((*durationFlag)(p), name, help)
		} else {
			fs.String(name, p.String(), help)
		}
	case *time.Duration: // a domain value's duration (stats.Gates): Duration's rule
		if bind {
			fs.Var((*durationFlag)(p), name, help)
		} else {
			fs.String(name, Duration(*p).String(), help)
		}
	case *string:
		fs.StringVar(p, name, *p, help)
	case *bool:
		fs.BoolVar(p, name, *p, help)
	case *int:
		fs.IntVar(p, name, *p, help)
	case *int64:
		fs.Int64Var(p, name, *p, help)
	case *float64:
		fs.Float64Var(p, name, *p, help)
	case *[]string:
		fs.StringArrayVar(p, name, *p, help)
	case encoding.TextUnmarshaler: // a value that parses itself (an arrival process, a stop rule)
		if bind {
			fs.Var(textFlag{p}, name, help)
		} else {
			fs.String(name, textOf(v), help)
		}
	default:
		panic(fmt.Sprintf("config: flag --%s: unsupported type %T", name, p))
	}
}

// textFlag is a flag of a configuration value that parses itself: its own
// UnmarshalText reads and checks it.
type textFlag struct{ p encoding.TextUnmarshaler }

func (t textFlag) String() string {
	if t.p == nil {
		return ""
	}
	return textOf(reflect.ValueOf(t.p).Elem())
}

// textOf is a value as configuration writes it: its MarshalText when it
// has one (a TTFT boundary's default is "content"), else its text.
func textOf(v reflect.Value) string {
	if m, ok := v.Interface().(encoding.TextMarshaler); ok {
		if b, err := m.MarshalText(); err == nil {
			return string(b)
		}
	}
	return fmt.Sprint(v.Interface())
}
func (t textFlag) Set(s string) error { return t.p.UnmarshalText([]byte(s)) }
func (t textFlag) Type() string       { return "string" }

// durationFlag is a Duration flag bound to its field: parsed by
// Duration's own rule (a Go duration, never negative).
type durationFlag Duration

// String is the value as --help shows its default: "0" for none (pflag
// shows no default then, as for its own duration flags).
func (d *durationFlag) String() string {
	if *d == 0 {
		return "0"
	}
	return Duration(*d).String()
}
func (d *durationFlag) Set(s string) error { return (*Duration)(d).UnmarshalText([]byte(s)) }
func (d *durationFlag) Type() string       { return "duration" }
