"""speclab.speed: costs, hardware, roofline."""
