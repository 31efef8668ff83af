package decode

import (
	"math"
	"time"
)

// AppendRFC3339Nano appends t in UTC as time.Time.AppendFormat prints
// "2006-01-02T15:04:05.000000000Z" (the JSON printers' frame time), and
// AppendAbsTime the UTC time ns nanoseconds after the Unix epoch as it
// prints "Jan _2, 2006 15:04:05.000000000 UTC" (tshark's frame.time): the same
// bytes without AppendFormat's layout parsing, which was 7% of -T json's
// time when it ran twice a packet. Times before 1970, and t after 2262
// (beyond int64 nanoseconds), go through AppendFormat.
func AppendRFC3339Nano(dst []byte, t time.Time) []byte {
	const maxSec = math.MaxInt64 / int64(time.Second)
	s := t.Unix()
	y, mo, d, hms, frac, ok := civil(t.UnixNano())
	if !ok || s < 0 || s >= maxSec {
		return t.UTC().AppendFormat(dst, "2006-01-02T15:04:05.000000000Z")
	}
	dst = append4(dst, y)
	dst = append(dst, '-')
	dst = append2(dst, mo)
	dst = append(dst, '-')
	dst = append2(dst, d)
	dst = append(dst, 'T')
	dst = appendClock(dst, hms, frac)
	return append(dst, 'Z')
}

// AppendAbsTime: see AppendRFC3339Nano.
func AppendAbsTime(dst []byte, ns int64) []byte {
	y, mo, d, hms, frac, ok := civil(ns)
	if !ok {
		return time.Unix(0, ns).UTC().AppendFormat(dst, "Jan _2, 2006 15:04:05.000000000 UTC")
	}
	dst = append(dst, shortMonths[3*(mo-1):3*mo]...)
	dst = append(dst, ' ')
	if d < 10 {
		dst = append(dst, ' ', byte('0'+d))
	} else {
		dst = append2(dst, d)
	}
	dst = append(dst, ", "...)
	dst = append4(dst, y)
	dst = append(dst, ' ')
	dst = appendClock(dst, hms, frac)
	return append(dst, " UTC"...)
}

const shortMonths = "JanFebMarAprMayJunJulAugSepOctNovDec"

// civil splits ns (UTC) into year, month (1–12), day (1–31), seconds of
// the day and nanoseconds; ok is false before 1970 (an int64 of
// nanoseconds ends in 2262). The date is Hinnant's civil_from_days.
func civil(ns int64) (y, mo, d, hms, frac int, ok bool) {
	if ns < 0 {
		return 0, 0, 0, 0, 0, false
	}
	secs := ns / 1e9
	frac = int(ns % 1e9)
	days := secs / 86400
	hms = int(secs % 86400)
	z := days + 719468
	era := z / 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	if mp < 10 {
		mo = int(mp + 3)
	} else {
		mo = int(mp - 9)
	}
	y = int(yoe + era*400)
	if mo <= 2 {
		y++
	}
	return y, mo, d, hms, frac, true
}

// appendClock appends hh:mm:ss.nnnnnnnnn.
func appendClock(dst []byte, hms, frac int) []byte {
	dst = append2(dst, hms/3600)
	dst = append(dst, ':')
	dst = append2(dst, hms/60%60)
	dst = append(dst, ':')
	dst = append2(dst, hms%60)
	dst = append(dst, '.')
	dst = append2(dst, frac/1e7)
	dst = append2(dst, frac/1e5%100)
	dst = append2(dst, frac/1e3%100)
	dst = append2(dst, frac/10%100)
	return append(dst, byte('0'+frac%10))
}

// append2 appends v (0–99) as two digits.
func append2(dst []byte, v int) []byte { return append(dst, decPairs[2*v], decPairs[2*v+1]) }

// append4 appends v (0–9999) as four digits.
func append4(dst []byte, v int) []byte { return append2(append2(dst, v/100), v%100) }
