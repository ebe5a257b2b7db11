package gatewaytest

// ManagementAdminKey opens the management API of the tests' gateways.
const ManagementAdminKey = "adm-test-management-key-0001"
