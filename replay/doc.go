// Package replay feeds a capture into the reference HCA model (package
// hca) and compares what the model answers with what the real responder
// answered.
//
// The capture is seen from the responder's point of view: every packet
// addressed to the responder (IP destination, or GRH destination GID, equal
// to its address) that carries a request is handed to the model in capture
// order; every response the responder sent (ACK, ATOMIC ACK, READ RESPONSE)
// is a captured response. Everything else (CM MADs on QP0/QP1, CNPs,
// traffic between other hosts, the responder's own requests) is counted
// and skipped.
//
//	capture ──► Replayer.Feed ──► Model.Receive ──► model responses ─┐
//	                   └──────────► captured responses ──────────────┴─► align ─► diff ─► Report
//
// Alignment. A model response exists as soon as its request is fed; the
// real one comes later in the capture. Each session (one responder QP)
// keeps a FIFO of the model responses still waiting for their captured
// counterpart. A captured response is paired with the oldest waiting model
// response of its session that has the same PSN, so retransmitted requests
// and their duplicate answers pair up in order. Responders answer in order,
// so model responses queued before the one paired were skipped by the
// responder: an ACK the model marks coalescable (hca.Response.Coalescable)
// is covered by the later acknowledgement; anything else is a missing
// response. A captured response with no waiting model response of its PSN
// is paired with the oldest waiting one when the opcodes agree (a response
// to the same request with the wrong PSN); otherwise it is an extra
// response. At the end, whatever model response is still waiting is
// missing.
//
// Unsolicited ACKs. A responder may acknowledge any SEND or WRITE packet
// it executed, AckReq or not. The model says for each what such an ACK
// carries (hca.Result.Ack) and each session remembers the last 512: a
// captured ACK no waiting model response has the PSN of, of a packet the
// model executed, is checked against it (an ACK, not a NAK; the MSN once
// the packet ends its message) and covers the waiting ACKs before it.
//
// Differences. A paired response is compared field by field: ACK versus
// NAK (syndrome), opcode, PSN, AETH syndrome bits (under the model's
// hca.Response.SyndromeMask), MSN, READ response data (only the bytes the
// model knows) and the ATOMIC original value (only when the model knows
// it). Each difference is a Divergence, with the request and response
// frames, the model's and the capture's values, and a sentence for humans
// that quotes the model's reason (hca.Response.Why).
//
// Notes. What the rules leave to the responder is not a divergence but a
// Note: an unsolicited or coalesced ACK, another MSN in an ACK inside a
// message not yet complete (hca.Response.InMessage), and READ data or an
// ATOMIC original value other than what only an earlier response showed
// (hca.Response.Learned, AtomicLearned: the responder's CPU may rewrite
// its buffer). Notes are counted and listed like divergences and never
// fail a replay. A UC session has no responses: its Session lists the
// requests the model dropped, with their reasons (Session.DropList).
//
// The responder rules are the model's alone: this package never decides
// what a responder should answer; it only lines answers up. After each
// captured response is compared, the model observes it (hca.Model.Observe)
// so that memory the capture reveals is known from then on; a response the
// model predicted in full (every byte of its READ data, its ATOMIC original
// value) and that matched is not shown: it holds nothing the model does not
// know.
//
// Memory is bounded by the model responses waiting for their captured
// counterparts (at most Options.MaxPending per session, and
// Options.MaxPendingBytes of READ data in all), by the number of
// divergences and completions kept in detail (Options.MaxDivergences,
// Options.MaxCompletions), and by the number of sessions, not by the
// length of the capture.
package replay
