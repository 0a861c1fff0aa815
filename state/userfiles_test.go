package state

import (
	"maps"
	"testing"
)

func TestUserFiles(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		save  bool
	}{
		{name: "never recorded"},
		{name: "none found", files: map[string]string{}, save: true},
		{name: "some", files: map[string]string{"notes.txt": "0123abcd", "nested": ""}, save: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(t.TempDir())
			if tt.save {
				if err := s.SaveUserFiles("run-1", tt.files); err != nil {
					t.Fatal(err)
				}
			}
			got, ok, err := s.LoadUserFiles("run-1")
			if err != nil {
				t.Fatal(err)
			}
			if ok != tt.save || !maps.Equal(got, tt.files) {
				t.Errorf("LoadUserFiles = %v, %v; want %v, %v", got, ok, tt.files, tt.save)
			}
		})
	}
}
