package process

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/colline/colline/events"
)

// Split returns the JSON values of data, one after another (a file the listener wrote, messages
// saved from the topic one per line, plan events pasted into the explorer). An error names the
// byte where the values stop making sense and wraps events.ErrInvalidJSON.
func Split(data []byte) ([]json.RawMessage, error) {
	var raws []json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		start := dec.InputOffset()
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var syn *json.SyntaxError
			switch {
			case errors.As(err, &syn):
				return nil, fmt.Errorf("byte %d: %w: %v", syn.Offset, events.ErrInvalidJSON, err)
			case errors.Is(err, io.ErrUnexpectedEOF):
				return nil, fmt.Errorf("byte %d: %w: the input ends inside the value that follows byte %d; is it cut short?", len(data), events.ErrInvalidJSON, start)
			}
			return nil, fmt.Errorf("byte %d: %w: %v", start, events.ErrInvalidJSON, err)
		}
		raws = append(raws, raw)
	}
	if len(raws) == 0 {
		return nil, fmt.Errorf("%w: empty input", events.ErrInvalidJSON)
	}
	return raws, nil
}
