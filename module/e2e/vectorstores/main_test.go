package vectorstores

import (
	"testing"

	"github.com/modelgate/modelgate/internal/gatewaytest"
)

// TestMain lets the test binary serve as a gateway process for the tests
// that start one (gatewaytest.StartChild).
func TestMain(m *testing.M) { gatewaytest.Main(m) }
