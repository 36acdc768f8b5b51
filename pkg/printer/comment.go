package printer

// PrintComment writes a comment line of human output (a replay's "# replay of ..." line):
// escaped, and dim when in color.
func (p *Printer) PrintComment(text string) error {
	line := Escape(text)
	if p.opts.Color {
		line = colorDim + line + colorReset
	}
	if _, err := p.w.WriteString(line + "\n"); err != nil {
		return err
	}
	if p.opts.FlushEach {
		return p.w.Flush()
	}
	return nil
}
