package main

import (
	"go/types"
	"sort"
	"strings"
)

// Counts are a package's exported identifiers by kind. Methods include
// those of exported interfaces; fields are the exported fields of exported
// struct types, embedded ones included.
type Counts struct {
	Types, Funcs, Methods, Fields, Consts, Vars int
}

// Total is the sum of every kind.
func (c Counts) Total() int {
	return c.Types + c.Funcs + c.Methods + c.Fields + c.Consts + c.Vars
}

// Features lists the exported API of pkg, one line a feature, sorted, in
// the Go project's api/ form:
//
//	pkg PATH, func Name(param types) results
//	pkg PATH, method (*T) Name(param types) results
//	pkg PATH, type T struct
//	pkg PATH, type T struct, Field type
//	pkg PATH, type T interface, Method(param types) results
//	pkg PATH, const C T   (or "const C = value" when untyped)
//	pkg PATH, var V T
//
// Types are written with package names as qualifiers; parameter names are
// left out (renaming one changes no caller).
func Features(pkg *types.Package) ([]string, Counts) {
	var c Counts
	var out []string
	prefix := "pkg " + pkg.Path() + ", "
	qual := func(p *types.Package) string {
		if p == pkg {
			return ""
		}
		return p.Name()
	}
	add := func(s string) { out = append(out, prefix+s) }

	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch obj := obj.(type) {
		case *types.Const:
			c.Consts++
			if b, ok := obj.Type().(*types.Basic); ok && b.Info()&types.IsUntyped != 0 {
				add("const " + name + " = " + obj.Val().ExactString())
			} else {
				add("const " + name + " " + types.TypeString(obj.Type(), qual))
			}
		case *types.Var:
			c.Vars++
			add("var " + name + " " + types.TypeString(obj.Type(), qual))
		case *types.Func:
			c.Funcs++
			add("func " + name + signature(obj.Type().(*types.Signature), qual))
		case *types.TypeName:
			c.Types++
			typeFeatures(obj, qual, add, &c)
		}
	}
	sort.Strings(out)
	return out, c
}

// typeFeatures adds the lines of an exported type: the type itself, its
// exported fields or interface methods, and its exported methods.
func typeFeatures(obj *types.TypeName, qual types.Qualifier, add func(string), c *Counts) {
	name := obj.Name()
	if obj.IsAlias() {
		add("type " + name + " = " + types.TypeString(types.Unalias(obj.Type()), qual))
		return
	}
	named, ok := obj.Type().(*types.Named)
	if !ok {
		return
	}
	if tp := named.TypeParams(); tp.Len() > 0 {
		var ps []string
		for i := range tp.Len() {
			p := tp.At(i)
			ps = append(ps, p.Obj().Name()+" "+types.TypeString(p.Constraint(), qual))
		}
		name += "[" + strings.Join(ps, ", ") + "]"
	}
	switch u := named.Underlying().(type) {
	case *types.Struct:
		add("type " + name + " struct")
		for i := range u.NumFields() {
			f := u.Field(i)
			if !f.Exported() {
				continue
			}
			c.Fields++
			if f.Embedded() {
				add("type " + name + " struct, embedded " + types.TypeString(f.Type(), qual))
			} else {
				add("type " + name + " struct, " + f.Name() + " " + types.TypeString(f.Type(), qual))
			}
		}
	case *types.Interface:
		add("type " + name + " interface")
		for i := range u.NumEmbeddeds() {
			add("type " + name + " interface, embedded " + types.TypeString(u.EmbeddedType(i), qual))
		}
		for i := range u.NumExplicitMethods() {
			m := u.ExplicitMethod(i)
			if !m.Exported() {
				continue
			}
			c.Methods++
			add("type " + name + " interface, " + m.Name() + signature(m.Type().(*types.Signature), qual))
		}
	default:
		add("type " + name + " " + types.TypeString(u, qual))
	}
	for i := range named.NumMethods() {
		m := named.Method(i)
		if !m.Exported() {
			continue
		}
		c.Methods++
		sig := m.Type().(*types.Signature)
		recv := obj.Name()
		if _, ptr := sig.Recv().Type().(*types.Pointer); ptr {
			recv = "*" + recv
		}
		add("method (" + recv + ") " + m.Name() + signature(sig, qual))
	}
}

// signature writes a function's parameter and result types without names:
// "(string, *url.URL) (bool, error)".
func signature(sig *types.Signature, qual types.Qualifier) string {
	var b strings.Builder
	b.WriteString("(")
	params := sig.Params()
	for i := range params.Len() {
		if i > 0 {
			b.WriteString(", ")
		}
		t := params.At(i).Type()
		if sig.Variadic() && i == params.Len()-1 {
			b.WriteString("..." + types.TypeString(t.(*types.Slice).Elem(), qual))
		} else {
			b.WriteString(types.TypeString(t, qual))
		}
	}
	b.WriteString(")")
	results := sig.Results()
	switch results.Len() {
	case 0:
	case 1:
		b.WriteString(" " + types.TypeString(results.At(0).Type(), qual))
	default:
		b.WriteString(" (")
		for i := range results.Len() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(types.TypeString(results.At(i).Type(), qual))
		}
		b.WriteString(")")
	}
	return b.String()
}
