package api

import (
	"encoding/xml"
	"strconv"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
)

// PREMIS 3 (http://www.loc.gov/premis/v3) as the events route writes it:
// one object (the resource: an intellectual entity, or a file with its
// digests, size and format), its events, and the agents they name.

const (
	premisNS        = "http://www.loc.gov/premis/v3"
	eventTypeScheme = "http://id.loc.gov/vocabulary/preservation/eventType"
)

type premisDoc struct {
	XMLName xml.Name      `xml:"premis"`
	NS      string        `xml:"xmlns,attr"`
	Prefix  string        `xml:"xmlns:premis,attr"` // the prefix of xsi:type's values
	XSI     string        `xml:"xmlns:xsi,attr"`
	Version string        `xml:"version,attr"`
	Object  premisObject  `xml:"object"`
	Events  []premisEvent `xml:"event"`
	Agents  []premisAgent `xml:"agent"`
}

type premisObject struct {
	Type            string                 `xml:"xsi:type,attr"`
	Identifier      premisObjectIdentifier `xml:"objectIdentifier"`
	Characteristics *premisCharacteristics `xml:"objectCharacteristics,omitempty"`
	OriginalName    string                 `xml:"originalName,omitempty"`
}

type premisObjectIdentifier struct {
	Type  string `xml:"objectIdentifierType"`
	Value string `xml:"objectIdentifierValue"`
}

type premisCharacteristics struct {
	Fixity []premisFixity `xml:"fixity"`
	Size   int64          `xml:"size"`
	Format premisFormat   `xml:"format"`
}

type premisFixity struct {
	Algorithm string `xml:"messageDigestAlgorithm"`
	Digest    string `xml:"messageDigest"`
}

type premisFormat struct {
	Designation *premisFormatDesignation `xml:"formatDesignation,omitempty"`
	Registry    *premisFormatRegistry    `xml:"formatRegistry,omitempty"`
}

type premisFormatDesignation struct {
	Name    string `xml:"formatName"`
	Version string `xml:"formatVersion,omitempty"`
}

type premisFormatRegistry struct {
	Name string `xml:"formatRegistryName"`
	Key  string `xml:"formatRegistryKey"`
}

type premisEvent struct {
	Identifier premisEventIdentifier `xml:"eventIdentifier"`
	Type       premisAuthority       `xml:"eventType"`
	DateTime   string                `xml:"eventDateTime"`
	Detail     *premisDetail         `xml:"eventDetailInformation,omitempty"`
	Outcome    premisOutcome         `xml:"eventOutcomeInformation"`
	Agent      premisLinkingAgent    `xml:"linkingAgentIdentifier"`
	Object     premisLinkingObject   `xml:"linkingObjectIdentifier"`
}

type premisEventIdentifier struct {
	Type  string `xml:"eventIdentifierType"`
	Value string `xml:"eventIdentifierValue"`
}

type premisAuthority struct {
	Authority    string `xml:"authority,attr,omitempty"`
	AuthorityURI string `xml:"authorityURI,attr,omitempty"`
	ValueURI     string `xml:"valueURI,attr,omitempty"`
	Value        string `xml:",chardata"`
}

type premisDetail struct {
	Detail string `xml:"eventDetail"`
}

type premisOutcome struct {
	Outcome string               `xml:"eventOutcome"`
	Detail  *premisOutcomeDetail `xml:"eventOutcomeDetail,omitempty"`
}

type premisOutcomeDetail struct {
	Note string `xml:"eventOutcomeDetailNote"`
}

type premisLinkingAgent struct {
	Type  string `xml:"linkingAgentIdentifierType"`
	Value string `xml:"linkingAgentIdentifierValue"`
	Role  string `xml:"linkingAgentRole"`
}

type premisLinkingObject struct {
	Type  string `xml:"linkingObjectIdentifierType"`
	Value string `xml:"linkingObjectIdentifierValue"`
}

type premisAgent struct {
	Identifier premisAgentIdentifier `xml:"agentIdentifier"`
	Name       string                `xml:"agentName"`
	Type       string                `xml:"agentType"`
	Version    string                `xml:"agentVersion,omitempty"`
}

type premisAgentIdentifier struct {
	Type  string `xml:"agentIdentifierType"`
	Value string `xml:"agentIdentifierValue"`
}

// eventView is one event as the route shows it, stored or told.
type eventView struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	TypeURI   string    `json:"typeURI,omitempty"`
	Date      time.Time `json:"date"`
	Agent     string    `json:"agent"`
	Outcome   string    `json:"outcome"`
	Detail    string    `json:"detail,omitempty"`
	Copy      string    `json:"copy,omitempty"`
	Algorithm string    `json:"algorithm,omitempty"`
	Digest    string    `json:"digest,omitempty"`
}

// premisAlgorithm names a digest algorithm as the PREMIS cryptographic
// hash vocabulary does.
func premisAlgorithm(alg string) string {
	switch strings.ToLower(alg) {
	case "sha256":
		return "SHA-256"
	case "sha512":
		return "SHA-512"
	case "md5":
		return "MD5"
	}
	return alg
}

// premisXML is the PREMIS 3 document of res and its events.
func premisXML(res *shelfmark.Resource, events []eventView) ([]byte, error) {
	urn := "urn:shelfmark:" + string(res.ID)
	doc := premisDoc{NS: premisNS, Prefix: premisNS, XSI: "http://www.w3.org/2001/XMLSchema-instance", Version: "3.0",
		Object: premisObject{Type: "intellectualEntity", Identifier: premisObjectIdentifier{Type: "URN", Value: urn}}}
	if f := res.File; f != nil && f.ExternalURL == "" {
		doc.Object.Type = "file"
		ch := &premisCharacteristics{Size: max(f.Size, 0)}
		for _, d := range []struct{ alg, v string }{{"sha256", f.SHA256}, {"sha512", f.SHA512}, {"md5", f.MD5}} {
			if d.v != "" {
				ch.Fixity = append(ch.Fixity, premisFixity{Algorithm: premisAlgorithm(d.alg), Digest: d.v})
			}
		}
		name := f.MediaType
		if name == "" {
			name = "application/octet-stream"
		}
		ch.Format.Designation = &premisFormatDesignation{Name: name}
		if ft := f.Format; ft != nil && ft.PRONOM != "" {
			if ft.Name != "" {
				ch.Format.Designation = &premisFormatDesignation{Name: ft.Name, Version: ft.Version}
			}
			ch.Format.Registry = &premisFormatRegistry{Name: "PRONOM", Key: ft.PRONOM}
		}
		doc.Object.Characteristics = ch
		doc.Object.OriginalName = f.Name
	}
	doc.Object.Type = "premis:" + doc.Object.Type
	agents := map[string]bool{}
	for _, e := range events {
		pe := premisEvent{
			Identifier: premisEventIdentifier{Type: "local", Value: e.ID},
			Type:       premisAuthority{Authority: "eventType", AuthorityURI: eventTypeScheme, ValueURI: e.TypeURI, Value: e.Type},
			DateTime:   e.Date.UTC().Format(time.RFC3339Nano),
			Outcome:    premisOutcome{Outcome: e.Outcome},
			Agent:      premisLinkingAgent{Type: "local", Value: e.Agent, Role: "executing program"},
			Object:     premisLinkingObject{Type: "URN", Value: urn},
		}
		if e.Detail != "" {
			pe.Outcome.Detail = &premisOutcomeDetail{Note: e.Detail}
		}
		if e.Copy != "" {
			pe.Detail = &premisDetail{Detail: "copy: " + e.Copy + " (" + premisAlgorithm(e.Algorithm) + " " + e.Digest + ")"}
		}
		doc.Events = append(doc.Events, pe)
		if !agents[e.Agent] {
			agents[e.Agent] = true
			name, version, _ := strings.Cut(e.Agent, " ")
			doc.Agents = append(doc.Agents, premisAgent{Identifier: premisAgentIdentifier{Type: "local", Value: e.Agent},
				Name: name, Type: "software", Version: version})
		}
	}
	out, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(out, '\n')...), nil
}

// eventID is the identifier of a told event (stored ones have numbers).
func eventID(kind string, n int) string { return kind + "-" + strconv.Itoa(n) }
