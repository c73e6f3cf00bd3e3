package api

import (
	"bytes"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// validatePREMIS validates doc against the PREMIS 3.0 schema with
// xmllint, offline; a missing xmllint skips the test unless
// SHELFMARK_REQUIRE_TOOLS=1.
func validatePREMIS(t *testing.T, doc []byte) {
	t.Helper()
	bin, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("SHELFMARK_REQUIRE_TOOLS") == "1" {
			t.Fatal("xmllint is not installed")
		}
		t.Skip("xmllint is not installed")
	}
	f := filepath.Join(t.TempDir(), "events.xml")
	if err := os.WriteFile(f, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--noout", "--nonet", "--schema", filepath.Join("testdata", "premis-v3-0.xsd"), f).CombinedOutput()
	if err != nil {
		t.Fatalf("xmllint: %v\n%s\n%s", err, out, doc)
	}
}

// TestPREMISValid: the PREMIS document of a file (digests, size, format,
// every kind of event) and of a work with no events but its ingestion
// validates against the PREMIS 3.0 schema, and says what it was given;
// markup in a detail is escaped, never read as XML.
func TestPREMISValid(t *testing.T) {
	at := time.Date(2026, 11, 29, 5, 0, 0, 123456000, time.UTC)
	file := &shelfmark.Resource{ID: "b3hvwgdhz", Kind: shelfmark.KindFile, File: &shelfmark.File{Name: "page <1>.tif", MediaType: "image/tiff", Size: 1234,
		SHA256: strings.Repeat("a", 64), SHA512: strings.Repeat("b", 128), Use: shelfmark.UseOriginal,
		Format: &shelfmark.Format{PRONOM: "fmt/353", Name: "Tagged Image File Format", Version: "6"}}}
	var events []eventView
	for i, typ := range []string{shelfmark.EventIngestion, shelfmark.EventCharacterization, shelfmark.EventFixityCheck, shelfmark.EventRecovery,
		shelfmark.EventReplication, shelfmark.EventDeletion} {
		events = append(events, eventView{ID: eventID("e", i), Type: typ, TypeURI: shelfmark.EventTypeURI(typ), Date: at.Add(time.Duration(i) * time.Hour),
			Agent: "Shelfmark 0.1.0", Outcome: shelfmark.OutcomeSuccess, Detail: "a detail with <markup> & more"})
	}
	events[2].Outcome, events[2].Copy, events[2].Algorithm, events[2].Digest = shelfmark.OutcomeFailure, shelfmark.CopyStore, "sha256", file.File.SHA256
	events[4].Agent = "Shelfmark"
	doc, err := premisXML(file, events)
	if err != nil {
		t.Fatal(err)
	}
	validatePREMIS(t, doc)
	var back struct {
		Object struct {
			Type string `xml:"http://www.w3.org/2001/XMLSchema-instance type,attr"`
			Name string `xml:"originalName"`
		} `xml:"object"`
		Events []struct {
			Type    string `xml:"eventType"`
			Outcome string `xml:"eventOutcomeInformation>eventOutcome"`
			Note    string `xml:"eventOutcomeInformation>eventOutcomeDetail>eventOutcomeDetailNote"`
		} `xml:"event"`
		Agents []string `xml:"agent>agentIdentifier>agentIdentifierValue"`
	}
	if err := xml.NewDecoder(bytes.NewReader(doc)).Decode(&back); err != nil {
		t.Fatal(err)
	}
	if back.Object.Type != "premis:file" || back.Object.Name != "page <1>.tif" || len(back.Events) != 6 ||
		back.Events[2].Type != shelfmark.EventFixityCheck || back.Events[2].Outcome != shelfmark.OutcomeFailure ||
		back.Events[0].Note != "a detail with <markup> & more" || len(back.Agents) != 2 {
		t.Errorf("the document read back: %+v\n%s", back, doc)
	}
	if !bytes.Contains(doc, []byte(`valueURI="http://id.loc.gov/vocabulary/preservation/eventType/fix"`)) {
		t.Errorf("no vocabulary URI of the fixity check:\n%s", doc)
	}

	work := &shelfmark.Resource{ID: "nzfjx7s3m", Kind: shelfmark.KindWork}
	doc, err = premisXML(work, events[:1])
	if err != nil {
		t.Fatal(err)
	}
	validatePREMIS(t, doc)
	if !bytes.Contains(doc, []byte(`xsi:type="premis:intellectualEntity"`)) {
		t.Errorf("a work is not an intellectual entity:\n%s", doc)
	}
}
